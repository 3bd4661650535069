// What an API key may do: its scopes. Every route declares the one scope it needs (defineRoute's
// `scope`, shown in /openapi.json as `x-scope`), and the auth middleware answers 403 naming it when the
// key lacks it. One rule decides (grants): `admin` may do everything, `read` every `<area>:read`, and
// `<area>:write` includes `<area>:read`. Keys made before scopes existed are `admin`.

/** The areas of the API, each with a read and a write scope. */
export const SCOPE_AREAS = {
  logs: "request logs, tracking calls, traces and spans (OTLP too), analytics, exports",
  prompts: "prompt templates, versions, release labels, snippets, folders, prompt runs, A/B releases",
  workflows: "workflows, their runs and results",
  datasets: "datasets and their versions",
  evaluations: "evaluations (reports) and their columns",
  tables: "smart tables and sheets",
  tools: "the tool registry and skill collections",
  webhooks: "webhooks and their deliveries",
  signals: "Signals: their hooks, tests (which judge logs and quote them), estimates, series and backfills",
  settings: "environment variables (never their values), log retention, the redaction policy (read) and its try-out",
} as const;

export type ScopeArea = keyof typeof SCOPE_AREAS;

/** Every scope a key can hold. */
export const SCOPES = [
  "admin",
  "read",
  ...(Object.keys(SCOPE_AREAS) as ScopeArea[]).flatMap((a) => [`${a}:read`, `${a}:write`] as const),
] as unknown as readonly Scope[];

export type Scope = "admin" | "read" | `${ScopeArea}:read` | `${ScopeArea}:write`;

export function isScope(value: unknown): value is Scope {
  return typeof value === "string" && (SCOPES as readonly string[]).includes(value);
}

/** Whether a key holding `held` may use a route that needs `needed`. */
export function grants(held: readonly string[], needed: Scope): boolean {
  if (held.includes("admin")) return true;
  if (needed === "admin") return false;
  if (held.includes(needed)) return true;
  const [area, access] = needed.split(":") as [ScopeArea, "read" | "write"];
  if (access === "read") return held.includes("read") || held.includes(`${area}:write`);
  return false;
}

/** What a scope allows, in words (the API reference and the keys CLI's help). */
export function describeScope(scope: Scope): string {
  if (scope === "admin") return "everything, including API keys, the audit log, the redaction policy, provider base URLs and protected release labels' approvals";
  if (scope === "read") return "every read of every area";
  const [area, access] = scope.split(":") as [ScopeArea, "read" | "write"];
  return `${access === "read" ? "read" : "read and change"} ${SCOPE_AREAS[area]}`;
}
