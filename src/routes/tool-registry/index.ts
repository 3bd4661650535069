// The tool registry: tools with versioned OpenAI function definitions, looked up by id or name.
import { NameText } from "../../lib/schemas";
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { QueryInt, ResourceFilterShape, SortBy, SortOrder } from "../../lib/query";
import { addToolVersion, createTool, getTool, listTools, testExecuteTool, toolExists } from "../../services/registry";
import { externalIdRoutes } from "../external-ids";
import { ExternalId, ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";

const Obj = z.record(z.string(), z.unknown());
const ToolName = NameText(255);
const LabelName = NameText(255);

/** OpenAI function-calling format: {type: "function", function: {name, description?, parameters?, strict?}}. */
export const ToolDefinition = z
  .looseObject({
    type: z.literal("function", { error: 'must be "function"' }),
    function: z.looseObject({
      name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, _ or -"),
      description: z.string().optional(),
      parameters: z
        .looseObject({ type: z.literal("object", { error: 'must be "object" (a JSON Schema object)' }), properties: Obj.optional(), required: z.array(z.string()).optional() })
        .optional(),
      strict: z.boolean().nullish(),
    }),
  })
  .openapi("ToolDefinition", { example: { type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } } });

/** The most environment variables one tool version may declare. */
const MAX_DECLARED_ENV_VARS = 50;
const Execution = z
  .object({
    type: z.literal("code"),
    language: z.enum(["python", "javascript"]),
    code: z.string(),
    env_vars: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,254}$/, "must be an environment variable key (letters, digits and underscores, not starting with a digit)"))
      .max(MAX_DECLARED_ENV_VARS, `must name at most ${MAX_DECLARED_ENV_VARS} variables`)
      .optional()
      .openapi({
        description:
          "The environment variables this version's code reads (`process.env`), by key: a run gets these and no others (the tool's value over the " +
          "workspace's). Absent or empty: none. An extension of PromptLayer's API.",
      }),
  })
  .nullish()
  .openapi({ description: "Stored as given; POST /api/public/v2/tool-registry/{identifier}/test-execute runs a JavaScript execution in a sandbox (Python is refused)." });

const VersionFields = {
  tool_definition: ToolDefinition,
  execution: Execution,
  commit_message: z.string().max(1024, "must be at most 1024 characters").nullish(),
  release_labels: z.array(LabelName).max(50, "at most 50 labels").nullish().openapi({ description: "Labels created on, or moved to, this version (an extension of PromptLayer's API)." }),
};

const Tool = z
  .object({
    id: z.int(),
    name: z.string(),
    description: z.string().nullable(),
    workspace_id: z.int(),
    folder_id: z.int().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    external_ids: z.array(ExternalId),
  })
  .openapi("ToolRegistry");

const ToolVersion = z
  .object({
    id: z.int(),
    tool_registry_id: z.int(),
    version_number: z.int(),
    tool_definition: Obj,
    execution: Obj.nullable(),
    commit_message: z.string().nullable(),
    created_by: z.int().nullable(),
    created_at: z.string(),
    labels: z.array(z.string()),
  })
  .openapi("ToolVersion");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const tags = ["tool registry"];
const IdentifierParam = z.object({
  identifier: z.string().min(1).max(255).openapi({ param: { name: "identifier", in: "path" }, description: "Tool id (tried first when numeric) or name" }),
});

const create = defineRoute({
  method: "post",
  path: "/api/public/v2/tool-registry",
  scope: "tools:write",
  tags,
  summary: "Create a tool",
  description:
    "name is unique per workspace (409). tool_definition must be in OpenAI function format. Creates version 1. " +
    "An execution declaring env_vars (their values are handed to the tool when it runs) takes the admin scope (403 otherwise).",
  errors: [404, 409],
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z
            .object({ name: ToolName, description: z.string().max(4096).nullish(), folder_id: z.int().positive("must be a positive integer").nullish(), external_ids: ExternalIdsInput, ...VersionFields })
            .openapi("CreateToolRegistry"),
        },
      },
    },
  },
  responses: { 201: json(z.object({ success: z.literal(true), tool_registry: Tool, version: ToolVersion, external_ids: z.array(ExternalId) }), "Created") },
});

const list = defineRoute({
  method: "get",
  path: "/api/public/v2/tool-registry",
  scope: "tools:read",
  tags,
  summary: "List tools",
  description:
    "Every tool of the workspace, with its latest version number, sorted by sort_by and sort_order; created_by_email and the created/updated bounds filter " +
    "as on every resource list; external_source with external_id finds the one tool mapped to that pair.",
  request: { query: z.object({ ...ResourceFilterShape, sort_by: SortBy, sort_order: SortOrder, ...ExternalIdLookupShape }) },
  responses: {
    200: json(z.object({ success: z.literal(true), tool_registries: z.array(Tool.extend({ latest_version_number: z.int().nullable() })) }), "The workspace's tools"),
  },
});

const get = defineRoute({
  method: "get",
  path: "/api/public/v2/tool-registry/{identifier}",
  scope: "tools:read",
  tags,
  summary: "Get a tool",
  description: "The latest version, or the one `version` or `label` selects (not both).",
  errors: [404],
  request: { params: IdentifierParam, query: z.object({ version: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(), label: LabelName.optional() }) },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        tool_registry: Tool.extend({
          labels: z.array(z.object({ id: z.int(), name: z.string(), tool_version_id: z.int(), version_number: z.int() })),
          version: ToolVersion.nullable(),
          tool_definition: Obj.nullable(),
        }),
      }),
      "The tool with the selected version",
    ),
  },
});

const addVersion = defineRoute({
  method: "post",
  path: "/api/public/v2/tool-registry/{identifier}/versions",
  scope: "tools:write",
  tags,
  summary: "Create a tool version",
  description:
    "Adds the next version; release_labels create or move labels to it. The answer is the version this call wrote. " +
    "An execution declaring env_vars (their values are handed to the tool when it runs) takes the admin scope (403 otherwise).",
  errors: [404],
  request: { params: IdentifierParam, body: { required: true, content: { "application/json": { schema: z.object(VersionFields).openapi("CreateToolVersion") } } } },
  responses: { 201: json(z.object({ success: z.literal(true), version: ToolVersion }), "Created") },
});

const CODE_MAX = 262_144;
const testExecute = defineRoute({
  method: "post",
  path: "/api/public/v2/tool-registry/{identifier}/test-execute",
  scope: "tools:write",
  tags,
  summary: "Run a tool version with given inputs",
  description:
    "Runs the version's JavaScript (or the execution and tool_definition given in the body, to test unsaved code) with `inputs` as the single argument " +
    "of the function named by tool_definition.function.name, which the code must define (it may be async). The code runs in a sandbox isolate of its own: " +
    "no network, TOOL_EXECUTION_CPU_MS of CPU and TOOL_EXECUTION_TIMEOUT_MS of wall time. `process.env` holds the environment variables the stored " +
    "version's `execution.env_vars` declares (the tool's value over the workspace's), provider credentials excepted (OPENAI_API_KEY, ANTHROPIC_API_KEY, any *_BASE_URL, " +
    "any workspace *_API_KEY: never handed on); code sent in the body runs with an empty `process.env`, so " +
    "no request can read the workspace's secrets. console.log/info/debug go to stdout, warn/error to stderr (64 KiB each). A failure of the code (a throw, a missing function, " +
    "a syntax error, a time limit) answers 200 with result.status \"error\"; the return value must be JSON. Python tools are a 400: this service has no Python sandbox. " +
    "The CPU limit is enforced by Cloudflare's runtime when deployed; the local runtime of `npm run dev` does not enforce it, so a busy loop in a tool stalls a local server.",
  errors: [404],
  request: {
    params: IdentifierParam,
    query: z.object({ version: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(), label: LabelName.optional() }),
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z
            .object({
              inputs: Obj.optional(),
              execution: z
                .object({
                  type: z.literal("code"),
                  language: z.enum(["python", "javascript"]),
                  code: z.string().max(CODE_MAX, `must be at most ${CODE_MAX} characters`),
                })
                .nullish(),
              tool_definition: ToolDefinition.nullish(),
            })
            .openapi("TestExecuteToolRequest"),
        },
      },
    },
  },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        message: z.string(),
        result: z.object({
          status: z.enum(["success", "error"]),
          result: z.unknown().optional(),
          stdout: z.string(),
          stderr: z.string(),
          duration_ms: z.int(),
          error: z.object({ type: z.string(), message: z.string() }).nullable(),
        }),
      }),
      "The run, successful or not",
    ),
  },
});

export function registerToolRegistryRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => c.json({ success: true as const, ...(await createTool(c.var.deps.db, c.get("auth"), c.req.valid("json"))) }, 201));

  app.openapi(list, async (c) => c.json({ success: true as const, tool_registries: await listTools(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("query")) }, 200));

  app.openapi(get, async (c) => {
    const { identifier } = c.req.valid("param");
    return c.json({ success: true as const, tool_registry: await getTool(c.var.deps.db, c.get("auth").workspaceId, identifier, c.req.valid("query")) }, 200);
  });

  app.openapi(testExecute, async (c) => {
    const { identifier } = c.req.valid("param");
    const deps = {
      db: c.var.deps.db,
      loader: c.var.deps.env.LOADER,
      envKey: c.var.deps.env.ENV_VARS_KEY,
      timeoutMs: Number(c.var.deps.env.TOOL_EXECUTION_TIMEOUT_MS ?? 10_000),
      cpuMs: Number(c.var.deps.env.TOOL_EXECUTION_CPU_MS ?? 1_000),
    };
    const result = await testExecuteTool(deps, c.get("auth").workspaceId, identifier, c.req.valid("query"), c.req.valid("json"));
    return c.json({ success: true as const, message: result.status === "success" ? "executed" : "the tool failed", result }, 200);
  });

  app.openapi(addVersion, async (c) => {
    const { identifier } = c.req.valid("param");
    return c.json({ success: true as const, version: await addToolVersion(c.var.deps.db, c.get("auth"), identifier, c.req.valid("json")) }, 201);
  });

  externalIdRoutes(app, {
    area: "tools",
    entityType: "tool_registry",
    basePath: "/api/public/v2/tool-registry",
    idParam: "tool_id",
    label: "tool registry entry",
    tag: "tool registry",
    exists: toolExists,
  });
}
