// The judge's providers for a workspace: its own environment variables first (OPENAI_API_KEY,
// ANTHROPIC_API_KEY and their *_BASE_URL, as the playground reads them), then the Worker's secrets.
// A workspace base URL is checked as an ENDPOINT URL is (a loopback or private address only where
// ENDPOINT_ALLOW_PRIVATE_ADDRESSES allows it); one that fails leaves that provider to the Worker's
// settings. A redirect is the provider's failure, never followed: a base URL cannot lead a key elsewhere.
import { createLlmProviders, type LlmProviders, type LlmSettings } from "../../blocks";
import { endpointUrlProblem } from "../../blocks/endpoint";
import type { Deps } from "../../env";
import { envForRun } from "../workspace";

const PROVIDERS = [
  { key: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" },
  { key: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL" },
] as const;

export async function judgeProviders(deps: Pick<Deps, "db" | "env">, ws: number): Promise<LlmProviders> {
  const env = deps.env;
  const vars = await envForRun(deps.db, env.ENV_VARS_KEY, ws);
  const settings: LlmSettings = { ...env };
  for (const p of PROVIDERS) {
    const key = vars[p.key]?.trim();
    if (!key) continue;
    const base = vars[p.baseUrl]?.trim();
    if (base && endpointUrlProblem(base, env.ENDPOINT_ALLOW_PRIVATE_ADDRESSES === "true")) continue;
    settings[p.key] = key;
    settings[p.baseUrl] = base || env[p.baseUrl];
  }
  return createLlmProviders(settings, (url, init) => fetch(url, { ...init, redirect: "manual" }));
}
