// API keys through the API (admin only): make one with a name and scopes (the key is in the answer,
// once), list them without secrets, revoke one. The keys CLI does the same from a shell.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { forgetWorkspaceKeys } from "../../http/middleware";
import { IdParam } from "../../lib/schemas";
import { describeScope, SCOPES } from "../../lib/scopes";
import { createApiKey, listApiKeys, revokeApiKey } from "../../services/workspace";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const tags = ["api keys"];

const SCOPE_LIST = SCOPES.map((s) => `\`${s}\` (${describeScope(s)})`).join("; ");

const ScopeName = z.enum(SCOPES as unknown as [string, ...string[]], { error: `must be one of ${SCOPES.join(", ")}` });

const ApiKey = z
  .object({
    id: z.int(),
    name: z.string().nullable().openapi({ description: "Null for keys made before keys had names (keys CLI without --name)." }),
    prefix: z.string().openapi({ description: "The key's first 11 characters, enough to tell it apart (`pe_` and 8 hex characters)." }),
    scopes: z.array(z.string()),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
    user_email: z.string().nullable(),
  })
  .openapi("ApiKey");

const CreateBody = z
  .object({
    name: z.string().trim().min(1, "must not be empty").max(128, "must be at most 128 characters"),
    scopes: z.array(ScopeName).min(1, "must name at least one scope").max(25, "at most 25 scopes"),
  })
  .openapi("ApiKeyCreateRequest");

const create = defineRoute({
  method: "post",
  path: "/api/public/v2/api-keys",
  scope: "admin",
  tags,
  summary: "Make an API key",
  description:
    `A new key of the caller's workspace (and user), with a name and its scopes. The key is in this answer only: store it now; only its SHA-256 is kept. Scopes: ${SCOPE_LIST}. ` +
    "`<area>:write` includes `<area>:read`; `read` is every read; `admin` is everything. Recorded in the audit log.",
  request: { body: { required: true, content: { "application/json": { schema: CreateBody } } } },
  responses: { 201: json(z.object({ success: z.literal(true), api_key: ApiKey, key: z.string() }), "Made (the key is shown once)") },
});

const list = defineRoute({
  method: "get",
  path: "/api/public/v2/api-keys",
  scope: "admin",
  tags,
  summary: "List the workspace's API keys",
  description: "Every key of the workspace, oldest first, revoked ones too: name, prefix, scopes, times. Never a key or its hash.",
  responses: { 200: json(z.object({ success: z.literal(true), api_keys: z.array(ApiKey) }), "The keys") },
});

const revoke = defineRoute({
  method: "delete",
  path: "/api/public/v2/api-keys/{api_key_id}",
  scope: "admin",
  tags,
  summary: "Revoke an API key",
  description:
    "The key stops working: at once in this isolate, in every other within AUTH_KEY_CACHE_MS (5 s). A key may revoke itself. Revoking a revoked key " +
    "changes nothing and answers it as it is; another workspace's or an unknown id is a 404. Recorded in the audit log.",
  errors: [404],
  request: { params: z.object({ api_key_id: IdParam("api_key_id") }) },
  responses: { 200: json(z.object({ success: z.literal(true), api_key: ApiKey }), "Revoked") },
});

export function registerApiKeyRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const { key, ...apiKey } = await createApiKey(c.var.deps.db, c.get("auth"), c.req.valid("json"));
    return c.json({ success: true as const, api_key: apiKey, key }, 201);
  });
  app.openapi(list, async (c) => c.json({ success: true as const, api_keys: await listApiKeys(c.var.deps.db, c.get("auth").workspaceId) }, 200));
  app.openapi(revoke, async (c) => {
    const auth = c.get("auth");
    const revoked = await revokeApiKey(c.var.deps.db, auth, c.req.valid("param").api_key_id);
    forgetWorkspaceKeys(auth.workspaceId);
    return c.json({ success: true as const, api_key: revoked }, 200);
  });
}
