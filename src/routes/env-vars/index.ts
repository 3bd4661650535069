// Environment variables: the workspace's (/api/public/v2/env-vars) and a tool's
// (/api/public/v2/tool-registry/{identifier}/env-vars). Values are secrets: see services/workspace/env-vars.ts.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { IdParam } from "../../lib/schemas";
import { createEnvVar, deleteEnvVar, listEnvVars, updateEnvVar, type EnvScope } from "../../services/workspace";
import { requireTool } from "../../services/registry";
import { CreateBody, EnvVar, UpdateBody } from "./schemas";
import { registerProviderKeyRoutes } from "./provider-keys";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

const Ok = z.object({ success: z.literal(true) });

const SECRET_NOTE =
  "Values are encrypted at rest (AES-256-GCM, key from the ENV_VARS_KEY Worker secret) and never answered after they are written: " +
  "lists show only the last four characters of a value of 12 or more (none of a shorter one). Tools and blocks read them when they run (tool variables over workspace ones of the same key). " +
  "Provider keys live here: OPENAI_API_KEY and ANTHROPIC_API_KEY (with OPENAI_BASE_URL / ANTHROPIC_BASE_URL for another server) are " +
  "what every LLM call of the workspace uses (table columns, evaluations, workflows, the playground), before the Worker's secrets of the " +
  "same names; the console sets them on its Settings page. " +
  "A provider base URL (a key ending in _BASE_URL, such as OPENAI_BASE_URL) decides where the stored provider key is sent: setting, changing " +
  "or deleting one needs the admin scope (403 otherwise). Every change is in the audit log (its key, never its value).";

const ToolParam = z.string().min(1).max(255).openapi({ param: { name: "identifier", in: "path" }, description: "The tool's id or name." });

function routesFor(scope: "workspace" | "tool") {
  const base = scope === "workspace" ? "/api/public/v2/env-vars" : "/api/public/v2/tool-registry/{identifier}/env-vars";
  const tags = scope === "workspace" ? ["environment variables"] : ["environment variables", "tool registry"];
  const field = scope === "workspace" ? "workspace_env_var" : "tool_env_var";
  const listField = scope === "workspace" ? "workspace_env_vars" : "tool_env_vars";
  const owner = scope === "workspace" ? "the workspace's" : "a tool's";
  const params = scope === "workspace" ? {} : { identifier: ToolParam };
  const byId = { ...params, var_id: IdParam("var_id") };
  const one = z.object({ success: z.literal(true), [field]: EnvVar });
  return {
    list: defineRoute({
      method: "get",
      path: base,
      scope: "settings:read",
      tags,
      summary: `List ${owner} environment variables`,
      description: SECRET_NOTE,
      errors: scope === "tool" ? [404] : [],
      request: { params: z.object(params) },
      responses: { 200: json(z.object({ success: z.literal(true), [listField]: z.array(EnvVar) }), "The variables, by key") },
    }),
    create: defineRoute({
      method: "post",
      path: base,
      scope: "settings:write",
      tags,
      summary: `Create ${owner === "the workspace's" ? "a workspace" : "a tool"} environment variable`,
      description: `${SECRET_NOTE} A key is unique in its scope (409).`,
      errors: scope === "tool" ? [403, 404, 409] : [403, 409],
      request: { params: z.object(params), body: { required: true, content: { "application/json": { schema: CreateBody } } } },
      responses: { 201: json(one, "Created") },
    }),
    update: defineRoute({
      method: "patch",
      path: `${base}/{var_id}`,
      scope: "settings:write",
      tags,
      summary: `Set the value of ${owner} environment variable`,
      description: SECRET_NOTE,
      errors: [404],
      request: { params: z.object(byId), body: { required: true, content: { "application/json": { schema: UpdateBody } } } },
      responses: { 200: json(one, "Updated") },
    }),
    remove: defineRoute({
      method: "delete",
      path: `${base}/{var_id}`,
      scope: "settings:write",
      tags,
      summary: `Delete ${owner} environment variable`,
      errors: [404],
      request: { params: z.object(byId) },
      responses: { 200: json(Ok, "Deleted") },
    }),
    field,
    listField,
  };
}

async function scopeOf(c: Context<AppEnv>, identifier: string | undefined): Promise<EnvScope> {
  const ws = c.get("auth").workspaceId;
  if (identifier === undefined) return { workspaceId: ws, toolId: null };
  const tool = await requireTool(c.var.deps.db, ws, identifier);
  return { workspaceId: ws, toolId: tool.id };
}

export function registerEnvVarRoutes(app: OpenAPIHono<AppEnv>) {
  registerProviderKeyRoutes(app);
  for (const scope of ["workspace", "tool"] as const) {
    const r = routesFor(scope);
    const identifierOf = (c: Context<AppEnv>) => (scope === "tool" ? c.req.param("identifier") : undefined);
    app.openapi(r.list, async (c) => {
      const vars = await listEnvVars(c.var.deps.db, c.var.deps.env.ENV_VARS_KEY, await scopeOf(c, identifierOf(c)));
      return c.json({ success: true as const, [r.listField]: vars }, 200);
    });
    app.openapi(r.create, async (c) => {
      const created = await createEnvVar(c.var.deps.db, c.var.deps.env.ENV_VARS_KEY, c.get("auth"), await scopeOf(c, identifierOf(c)), c.req.valid("json"));
      return c.json({ success: true as const, [r.field]: created }, 201);
    });
    app.openapi(r.update, async (c) => {
      const { var_id } = c.req.valid("param") as { var_id: number };
      const updated = await updateEnvVar(c.var.deps.db, c.var.deps.env.ENV_VARS_KEY, c.get("auth"), await scopeOf(c, identifierOf(c)), var_id, c.req.valid("json").value);
      return c.json({ success: true as const, [r.field]: updated }, 200);
    });
    app.openapi(r.remove, async (c) => {
      const { var_id } = c.req.valid("param") as { var_id: number };
      await deleteEnvVar(c.var.deps.db, c.get("auth"), await scopeOf(c, identifierOf(c)), var_id);
      return c.json({ success: true as const }, 200);
    });
  }
}
