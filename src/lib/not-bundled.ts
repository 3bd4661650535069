// Stands in for a package the bundle leaves out (wrangler.toml [alias]): code that imports it loads,
// and constructing what it exports throws. Today that package is Ajv (and ajv-formats), which the MCP
// SDK's Server imports for its default JSON Schema validator; our server passes the eval-free
// @cfworker/json-schema one instead (src/mcp/server.ts), so Ajv is never constructed, and Workers
// could not run it anyway (it compiles code at run time).
export default class NotBundled {
  constructor() {
    throw new Error("this package is not in the Worker's bundle (wrangler.toml [alias]); pass the code that wants it an alternative");
  }
}
