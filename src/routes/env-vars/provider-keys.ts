// GET /api/public/v2/provider-keys: which LLM providers the workspace's calls can reach, and where
// each key comes from (the workspace's variable, or the Worker's secret), in the one order every LLM
// call takes (blocks/llm.ts providerSettings). It names sources only, never a key or part of one, so
// the console can say "runs use the deployment's key" without a workspace ever seeing that key.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { envForRun } from "../../base-deps";
import { PROVIDER_VARIABLES, providerSettings, type KeyedProvider } from "../../blocks";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";

const ProviderKey = z
  .object({
    provider: z.enum(Object.keys(PROVIDER_VARIABLES) as [KeyedProvider, ...KeyedProvider[]]),
    key_variable: z.string().openapi({ description: "The variable that holds its key (OPENAI_API_KEY, ANTHROPIC_API_KEY)." }),
    base_url_variable: z.string(),
    source: z.enum(["workspace", "worker"]).nullable().openapi({ description: "workspace: the workspace's variable; worker: the deployment's secret; null: no key, calls are refused." }),
    problem: z.string().nullable().openapi({ description: "Why a provider with a workspace key cannot be used (its base URL refused)." }),
  })
  .openapi("ProviderKey");

const providerKeys = defineRoute({
  method: "get",
  path: "/api/public/v2/provider-keys",
  scope: "settings:read",
  tags: ["environment variables"],
  summary: "Where each LLM provider's key comes from",
  description:
    "For openai and anthropic: whether the workspace's LLM calls (table columns, evaluations, workflows, the playground) have a key, and " +
    "whether it is the workspace's environment variable (which comes first) or the deployment's Worker secret of the same name. " +
    "Names sources only, never a value.",
  responses: {
    200: {
      description: "The providers",
      content: { "application/json": { schema: z.object({ success: z.literal(true), providers: z.array(ProviderKey) }) } },
    },
  },
});

export function registerProviderKeyRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(providerKeys, async (c) => {
    const env = c.var.deps.env;
    const vars = await envForRun(c.var.deps.db, env.ENV_VARS_KEY, c.get("auth").workspaceId);
    const { sources, problems } = providerSettings(vars, env, env.ENDPOINT_ALLOW_PRIVATE_ADDRESSES === "true");
    const providers = (Object.keys(PROVIDER_VARIABLES) as KeyedProvider[]).map((p) => ({
      provider: p,
      key_variable: PROVIDER_VARIABLES[p].key,
      base_url_variable: PROVIDER_VARIABLES[p].baseUrl,
      source: sources[p],
      problem: problems[p] ?? null,
    }));
    return c.json({ success: true as const, providers }, 200);
  });
}
