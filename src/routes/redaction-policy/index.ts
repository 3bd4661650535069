// The workspace's redaction policy (src/redaction/, docs/privacy.md): read it, save it (admin), turn it
// off (admin), and try it on a text or a log body without storing anything.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { forgetWorkspaceKeys } from "../../http/middleware";
import { ApiError } from "../../lib/errors";
import { toHex } from "../../lib/crypto";
import { ACTIONS, checkPolicy, compilePolicy, DETECTOR_TYPES, FIELD_GROUPS, POLICY_LIMITS, Redaction, redactLogContent, type StoredPolicy } from "../../redaction";
import { deleteRedactionPolicy, getRedactionPolicy, putRedactionPolicy, storedPolicy } from "../../services/workspace";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const tags = ["redaction"];

const Detector = z.object({
  type: z.enum(DETECTOR_TYPES, { error: `must be one of ${DETECTOR_TYPES.join(", ")}` }),
  action: z.enum(ACTIONS, { error: "must be mask, hash or drop" }),
  region: z.string().nullish().openapi({ description: "phone only: also find numbers as this country writes them (ISO 3166 alpha-2, e.g. US); without it, numbers written with their country code (+44 …)." }),
});

const Custom = z.object({
  name: z.string().min(1).max(POLICY_LIMITS.nameLength).openapi({ description: "Letters, digits, _ . -; its placeholder is the name in capitals ([TICKET_ID]) and its count goes under the name." }),
  pattern: z.string().min(1).max(POLICY_LIMITS.patternLength).openapi({ description: "An RE2 regular expression (no backreferences or lookarounds), run in linear time." }),
  action: z.enum(ACTIONS, { error: "must be mask, hash or drop" }),
  ignore_case: z.boolean().optional(),
});

const PolicyBody = z
  .object({
    detectors: z.array(Detector).max(DETECTOR_TYPES.length).default([]),
    custom: z.array(Custom).max(POLICY_LIMITS.customPatterns).default([]),
    fields: z
      .array(z.enum(FIELD_GROUPS, { error: `must be one of ${FIELD_GROUPS.join(", ")}` }))
      .max(FIELD_GROUPS.length)
      .optional()
      .openapi({ description: `Where the policy applies (default: everywhere): ${FIELD_GROUPS.join(", ")}.` }),
  })
  .openapi("RedactionPolicyRequest");

const Policy = z
  .object({
    success: z.literal(true),
    enabled: z.boolean().openapi({ description: "false: no policy, nothing is redacted (the default)." }),
    detectors: z.array(Detector),
    custom: z.array(Custom),
    fields: z.array(z.string()),
    updated_at: z.string().nullable(),
  })
  .openapi("RedactionPolicy");

const WHAT =
  "Detectors: `email`; `phone` (valid numbers by each country's numbering plan); `payment_card` (a network's issuer range and length, and the Luhn " +
  "check); `iban` (the country's length and format, and the mod-97 check); `ip_address` (IPv4 and IPv6); `national_id` (formats with a check: US SSN, " +
  "Spanish DNI/NIE, Italian codice fiscale, French NIR, Brazilian CPF, Indian Aadhaar, Chinese resident id, UK NINO, Swedish, Finnish, Norwegian, " +
  "Polish, German and Belgian numbers); `credential` (provider and cloud API keys, tokens, private keys, JWTs, passwords in URLs). Actions: `mask` " +
  "(a typed placeholder, [EMAIL]), `hash` (the placeholder with a keyed hash, [EMAIL:3fa9c0d2e1]: the same value gives the same hash in this " +
  "workspace), `drop` (the value goes: a metadata value, attribute, variable or tag with its key, a message text becomes empty). " +
  "Applied before anything is stored on every way a log comes in; each log counts what each detector replaced (`redactions`). docs/privacy.md.";

const getRoute = defineRoute({
  method: "get",
  path: "/api/public/v2/redaction-policy",
  scope: "settings:read",
  tags,
  summary: "Get the workspace's redaction policy",
  description: `Off (\`enabled: false\`) until a policy is saved. ${WHAT}`,
  responses: { 200: json(Policy, "The policy") },
});

const putRoute = defineRoute({
  method: "put",
  path: "/api/public/v2/redaction-policy",
  scope: "admin",
  tags,
  summary: "Save the workspace's redaction policy",
  description:
    `${WHAT} Replaces the policy whole. Logs written from now on are redacted by it (every isolate within AUTH_CACHE_TTL_MS, 60 s at most); logs stored ` +
    `before stay as they were. At most ${POLICY_LIMITS.customPatterns} custom patterns of ${POLICY_LIMITS.patternLength} characters; a pattern RE2 cannot run ` +
    `in linear time (a backreference, a lookaround), one larger than ${POLICY_LIMITS.programSize} steps, or one that matches the empty string is a 400 naming it. Recorded in the audit log.`,
  request: { body: { required: true, content: { "application/json": { schema: PolicyBody } } } },
  responses: { 200: json(Policy, "The policy as stored") },
});

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/public/v2/redaction-policy",
  scope: "admin",
  tags,
  summary: "Turn redaction off",
  description: "Removes the policy: logs written from now on are stored as sent. Logs stored before stay redacted. Recorded in the audit log.",
  responses: { 200: json(Policy, "Off") },
});

const TestBody = z
  .object({
    text: z.string().max(100_000).optional().openapi({ description: "A text to redact." }),
    log: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "A log body as POST /log-request takes it (input, output, parameters, metadata, tags, prompt_input_variables, error_message): each field redacted as a log's would be." }),
    policy: PolicyBody.optional().openapi({ description: "A policy to try instead of the saved one (nothing is saved)." }),
  })
  .openapi("RedactionTestRequest");

const testRoute = defineRoute({
  method: "post",
  path: "/api/public/v2/redaction-policy/test",
  scope: "settings:read",
  tags,
  summary: "Try the redaction policy",
  description:
    "What a text, or a log body, would become under the saved policy (or `policy`, to try one before saving it), and how many values each detector " +
    "replaced. Nothing is stored or logged. Give `text` or `log` (400 with neither). A `hash` under a policy tried before any was saved uses a key of this call alone.",
  request: { body: { required: true, content: { "application/json": { schema: TestBody } } } },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        source: z.enum(["saved", "given", "none"]).openapi({ description: "Which policy ran: the saved one, the one in the body, or none (no policy saved: nothing changes)." }),
        text: z.string().optional(),
        log: z.record(z.string(), z.unknown()).optional(),
        redactions: z.record(z.string(), z.int()),
      }),
      "What it would become",
    ),
  },
});

const obj = (v: unknown) => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

export function registerRedactionPolicyRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(getRoute, async (c) => c.json({ success: true as const, ...(await getRedactionPolicy(c.var.deps.db, c.get("auth").workspaceId)) }, 200));

  app.openapi(putRoute, async (c) => {
    const auth = c.get("auth");
    const body = c.req.valid("json");
    const saved = await putRedactionPolicy(c.var.deps.db, auth, { detectors: body.detectors, custom: body.custom, fields: body.fields ?? [] });
    // This isolate's cached keys carry the old policy: read again now (others within the key cache's bound).
    forgetWorkspaceKeys(auth.workspaceId);
    return c.json({ success: true as const, ...saved }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const auth = c.get("auth");
    const off = await deleteRedactionPolicy(c.var.deps.db, auth);
    forgetWorkspaceKeys(auth.workspaceId);
    return c.json({ success: true as const, ...off }, 200);
  });

  app.openapi(testRoute, async (c) => {
    const body = c.req.valid("json");
    if (body.text === undefined && body.log === undefined) throw new ApiError("validation_error", "text: give a text or a log to try the policy on", { details: [{ field: "text", rule: "text or log is required" }] });
    const saved = await storedPolicy(c.var.deps.db, c.get("auth").workspaceId);
    let policy: StoredPolicy | null = saved?.policy ?? null;
    let source: "saved" | "given" | "none" = policy ? "saved" : "none";
    if (body.policy) {
      const checked = checkPolicy({ detectors: body.policy.detectors, custom: body.policy.custom, fields: body.policy.fields ?? [] });
      if (!checked.ok) throw new ApiError("validation_error", `policy.${checked.field}: ${checked.message}`, { details: [{ field: `policy.${checked.field}`, rule: checked.message }] });
      policy = { ...checked.value, hash_key: saved?.policy.hash_key ?? toHex(crypto.getRandomValues(new Uint8Array(32))) };
      source = "given";
    }
    if (!policy) return c.json({ success: true as const, source, ...(body.text !== undefined ? { text: body.text } : {}), ...(body.log ? { log: body.log } : {}), redactions: {} }, 200);
    const r = new Redaction(compilePolicy(policy));
    const out: { text?: string; log?: Record<string, unknown> } = {};
    if (body.text !== undefined) {
      const t = await r.text(body.text);
      out.text = t.value;
    }
    if (body.log) {
      const l = body.log;
      const content = {
        input: obj(l.input),
        output: obj(l.output),
        parameters: obj(l.parameters),
        tags: Array.isArray(l.tags) ? l.tags.filter((t): t is string => typeof t === "string") : [],
        metadata: obj(l.metadata) as Record<string, string>,
        prompt_input_variables: obj(l.prompt_input_variables),
        error_message: typeof l.error_message === "string" ? l.error_message : null,
      };
      out.log = { ...l, ...(await redactLogContent(r, content)) };
    }
    return c.json({ success: true as const, source, ...out, redactions: r.summary() ?? {} }, 200);
  });
}
