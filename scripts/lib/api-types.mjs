// The console's answer types, generated from the API's own OpenAPI document into console/src/api.gen.ts
// (git-ignored, so it cannot drift from the routes). `npm run typecheck` and the console's build write it.
//
// The document is the one GET /openapi.json serves: src/app.ts is loaded in Node through Vite (its
// value imports reach no cloudflare:* module) and asked for it. Its JSON Schemas become TypeScript with
// json-schema-to-typescript; three maps name them by "<METHOD> <path>" (the document's {param} spelling):
// - Answers: the JSON of the operation's 2xx answers (null for a 204). An operation that answers no
//   JSON (a ZIP, HTML, NDJSON) is left out: the console's JSON helpers cannot call it.
// - Bodies: its JSON request body.
// - Queries: its query parameters, each with its schema, optional unless the route requires it.
// The components' schemas keep their names (TraceSpan, PromptBlueprint …).
import { writeFileSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./wrangler.mjs";

export const API_TYPES_FILE = join(ROOT, "console", "src", "api.gen.ts");
const MAPS = ["Answers", "Bodies", "Queries"];
const METHODS = ["get", "post", "put", "patch", "delete"];

/** The OpenAPI document GET /openapi.json serves, built in Node. */
export async function openApiDocument() {
  return withAppModules(async (load) => {
    const { createApp } = await load("/src/app.ts");
    const log = console.log;
    console.log = () => {}; // the request's own log line
    try {
      const res = await createApp().request("/openapi.json", {}, {});
      if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
      return await res.json();
    } finally {
      console.log = log;
    }
  });
}

/**
 * Runs `fn` with a loader of src/ modules in Node (through Vite, as the console's build does):
 * app.ts's value imports reach no cloudflare:* module, so the app and what it serves load here.
 */
export async function withAppModules(fn) {
  const { createServer } = await import("vite");
  const server = await createServer({
    root: ROOT,
    configFile: false,
    appType: "custom",
    logLevel: "error",
    server: { middlewareMode: true, hmr: false, watch: null },
    optimizeDeps: { noDiscovery: true, include: [] },
  });
  try {
    return await fn((path) => server.ssrLoadModule(path));
  } finally {
    await server.close();
  }
}

/**
 * The document's schemas as json-schema-to-typescript reads them: references into `definitions`;
 * tuples (2020-12 prefixItems, which it does not know) as draft-4 item lists; and a named schema made
 * nullable, which the document spells `allOf: [{$ref}, {type: [..., "null"]}]` (an intersection that
 * would refuse the null), as `anyOf: [{$ref}, {type: "null"}]`; and a schema of annotations only (any
 * JSON value, described) as unknown, where it would otherwise make it an object.
 */
function toDefinitions(schema) {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"#/definitions/'), (_, value) => {
    if (!value || typeof value !== "object") return value;
    if (Array.isArray(value.prefixItems)) {
      const { prefixItems, items, ...rest } = value;
      return items === undefined || items === false ? { ...rest, items: prefixItems } : { ...rest, items: prefixItems, additionalItems: items };
    }
    if (Array.isArray(value.allOf) && value.allOf.length === 2 && isNullableMark(value.allOf[1])) {
      const { allOf, ...rest } = value;
      return { ...rest, anyOf: [allOf[0], { type: "null" }] };
    }
    if (isAnyValue(value)) return { ...value, tsType: "unknown" };
    return value;
  });
}

const ANNOTATIONS = new Set(["description", "title", "example", "examples", "default", "deprecated", "readOnly", "writeOnly"]);
const isAnyValue = (s) =>
  Object.keys(s).length > 0 && Object.keys(s).every((k) => ANNOTATIONS.has(k)) && ["description", "title"].every((k) => s[k] === undefined || typeof s[k] === "string");

const isNullableMark = (s) => Object.keys(s).length === 1 && Array.isArray(s.type) && s.type.includes("null");
const jsonOf = (content) => content?.["application/json"]?.schema;
const mapOf = (entries) => ({ type: "object", properties: Object.fromEntries(entries), required: entries.map(([k]) => k), additionalProperties: false });

/** The three maps and the components, as one JSON Schema. */
export function apiSchema(doc) {
  const answers = [];
  const bodies = [];
  const queries = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const ok = Object.entries(op.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
      const answerSchemas = ok.flatMap(([status, res]) => (status === "204" ? [{ type: "null" }] : jsonOf(res.content) ? [jsonOf(res.content)] : []));
      if (answerSchemas.length) answers.push([key, answerSchemas.length === 1 ? answerSchemas[0] : { anyOf: answerSchemas }]);
      const body = jsonOf(op.requestBody?.content);
      if (body) bodies.push([key, body]);
      const params = (op.parameters ?? []).filter((p) => p.in === "query");
      queries.push([
        key,
        {
          type: "object",
          properties: Object.fromEntries(params.map((p) => [p.name, p.schema ?? {}])),
          required: params.filter((p) => p.required).map((p) => p.name),
          additionalProperties: false,
        },
      ]);
    }
  }
  const components = doc.components?.schemas ?? {};
  for (const name of MAPS) if (name in components) throw new Error(`a component schema is named ${name}, like one of the generated maps`);
  return toDefinitions({
    title: "ApiTypes",
    type: "object",
    properties: Object.fromEntries(MAPS.map((m) => [m, { $ref: `#/definitions/${m}` }])),
    required: MAPS,
    additionalProperties: false,
    definitions: { ...components, Answers: mapOf(answers), Bodies: mapOf(bodies), Queries: mapOf(queries) },
  });
}

/** Writes console/src/api.gen.ts from the document (only when its text changed); returns its path. */
export async function writeApiTypes() {
  const { compile } = await import("json-schema-to-typescript");
  const ts = await compile(apiSchema(await openApiDocument()), "ApiTypes", {
    bannerComment: "// Generated by scripts/lib/api-types.mjs from GET /openapi.json: do not edit (npm run typecheck writes it again).",
    additionalProperties: false,
    unreachableDefinitions: true,
    strictIndexSignatures: true,
    unknownAny: true,
    ignoreMinAndMaxItems: true,
    format: true,
  });
  if (!existsSync(API_TYPES_FILE) || readFileSync(API_TYPES_FILE, "utf8") !== ts) writeFileSync(API_TYPES_FILE, ts);
  return API_TYPES_FILE;
}
