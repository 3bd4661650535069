// The tool table (tools.ts) read against the API's OpenAPI document: each tool's MCP definition (its
// input schema is the operation's path, query and JSON body parameters, as /openapi.json declares
// them) and where each argument goes when the tool is called. Pure: the document is handed in, so
// the server, the tests and the docs generator build the same definitions.
import { TOOLS, type HttpMethod, type JsonSchema, type ToolSpec } from "./tools";

/** The part of an OpenAPI 3.1 document read here. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

interface OpenApiOperation {
  summary?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
}

/** A tool as tools/list answers it. */
interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, JsonSchema>; required?: string[]; $defs?: Record<string, JsonSchema> };
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean };
}

/** Where a call's arguments go. */
interface ToolRoute {
  method: HttpMethod;
  /** The operation's path, with its parameters as /openapi.json names them ({identifier}). */
  template: string;
  /** argument → the operation's name for it, by where it goes */
  path: Record<string, string>;
  query: Record<string, string>;
  body: Record<string, string>;
  /** The operation takes a JSON body (sent as {} when no argument goes there). */
  hasBody: boolean;
}

export interface CatalogEntry {
  spec: ToolSpec;
  definition: ToolDefinition;
  route: ToolRoute;
}

export const API_KEY_ARGUMENT = "api_key";

const API_KEY_SCHEMA: JsonSchema = {
  type: "string",
  description: "The PromptEdge API key for this call; wins over the key sent with the MCP request (Authorization: Bearer or X-API-KEY).",
};

const REF_PREFIX = "#/components/schemas/";
/** OpenAPI's own keywords, which are not JSON Schema's (a discriminator's mapping names components). */
const OPENAPI_ONLY = new Set(["discriminator", "example", "xml", "externalDocs"]);

/**
 * A schema as plain JSON Schema: its component references pointed at `$defs` (filled with the
 * components it reaches), OpenAPI's own keywords left out.
 */
function localRefs(schema: JsonSchema, doc: OpenApiDocument, defs: Record<string, JsonSchema>): JsonSchema {
  const components = doc.components?.schemas ?? {};
  // `names`: the value is a map of names to schemas (properties, $defs…), whose keys are not keywords.
  const visit = (value: unknown, names = false): unknown => {
    if (Array.isArray(value)) return value.map((v) => visit(v));
    if (!value || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (names) out[k] = visit(v);
      else if (OPENAPI_ONLY.has(k)) continue;
      else if (k === "$ref" && typeof v === "string" && v.startsWith(REF_PREFIX)) {
        const name = v.slice(REF_PREFIX.length);
        if (!(name in defs)) {
          const target = components[name];
          if (!target) throw new Error(`/openapi.json has no component ${name}`);
          defs[name] = {}; // taken before the visit, so a recursive schema ends
          defs[name] = visit(target) as JsonSchema;
        }
        out.$ref = `#/$defs/${name}`;
      } else out[k] = visit(v, k === "properties" || k === "patternProperties" || k === "$defs" || k === "dependentSchemas");
    }
    return out;
  };
  return visit(schema) as JsonSchema;
}

function resolveRef(schema: JsonSchema | undefined, doc: OpenApiDocument): JsonSchema | undefined {
  let s = schema;
  for (let i = 0; s && typeof s.$ref === "string" && i < 8; i++) s = doc.components?.schemas?.[s.$ref.slice(REF_PREFIX.length)];
  return s;
}

/** One tool's definition and route, from its entry and the operation it names. */
function catalogEntry(spec: ToolSpec, doc: OpenApiDocument): CatalogEntry {
  const [method, path] = spec.operation.split(" ") as [HttpMethod, string];
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${spec.name}: /openapi.json has no ${spec.operation}`);
  const argOf = new Map(Object.entries(spec.rename ?? {}).map(([arg, param]) => [param, arg]));
  const omit = new Set(spec.omit ?? []);
  const defs: Record<string, JsonSchema> = {};
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const route: ToolRoute = { method, template: path, path: {}, query: {}, body: {}, hasBody: false };
  const add = (param: string, schema: JsonSchema, isRequired: boolean, description?: string) => {
    const arg = argOf.get(param) ?? param;
    if (arg in properties) throw new Error(`${spec.name}: ${arg} is both a parameter and a body field of ${spec.operation}`);
    const local = localRefs(schema, doc, defs);
    properties[arg] = description && !local.description ? { ...local, description } : local;
    if (isRequired) required.push(arg);
    return arg;
  };
  for (const p of op.parameters ?? []) {
    if ((p.in !== "path" && p.in !== "query") || omit.has(p.name)) continue;
    const arg = add(p.name, p.schema ?? {}, p.in === "path" || p.required === true, p.description);
    route[p.in === "path" ? "path" : "query"][arg] = p.name;
  }
  const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
  if (bodySchema) {
    const body = resolveRef(bodySchema, doc);
    if (!body || body.type !== "object" || typeof body.properties !== "object") throw new Error(`${spec.name}: the JSON body of ${spec.operation} is not an object of properties`);
    route.hasBody = true;
    const bodyRequired = new Set(Array.isArray(body.required) ? (body.required as string[]) : []);
    for (const [name, schema] of Object.entries(body.properties as Record<string, JsonSchema>)) {
      if (omit.has(name)) continue;
      route.body[add(name, schema, bodyRequired.has(name))] = name;
    }
  }
  for (const [arg, { schema, note }] of Object.entries(spec.accepted ?? {})) {
    if (arg in properties) throw new Error(`${spec.name}: ${arg} is accepted-only but ${spec.operation} takes it`);
    properties[arg] = { ...schema, description: `Accepted as PromptLayer's server takes it, and not applied: ${note}` };
  }
  properties[API_KEY_ARGUMENT] = API_KEY_SCHEMA;
  const inputSchema: ToolDefinition["inputSchema"] = { type: "object", properties };
  if (required.length > 0) inputSchema.required = required;
  if (Object.keys(defs).length > 0) inputSchema.$defs = defs;
  const annotations: ToolDefinition["annotations"] = { readOnlyHint: spec.readOnly };
  // MCP reads a tool that is not read-only as destructive unless told otherwise: only deletes are.
  if (!spec.readOnly) annotations.destructiveHint = method === "DELETE";
  return { spec, route, definition: { name: spec.name, description: spec.description, inputSchema, annotations } };
}

const catalogs = new WeakMap<OpenApiDocument, Map<string, CatalogEntry>>();

/** Every tool of the table by name, built once per document. */
export function catalogOf(doc: OpenApiDocument): Map<string, CatalogEntry> {
  let catalog = catalogs.get(doc);
  if (!catalog) {
    catalog = new Map(TOOLS.map((s) => [s.name, catalogEntry(s, doc)]));
    catalogs.set(doc, catalog);
  }
  return catalog;
}
