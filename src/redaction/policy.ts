// A workspace's redaction policy: which detectors run, which custom patterns, with what action, on
// which fields. Parsed once when it is saved (PUT /api/public/v2/redaction-policy), where every custom
// pattern is compiled by a linear-time engine (RE2, through re2js) so that no pattern can take more
// than time proportional to the text it reads; what RE2 cannot run in linear time (backreferences,
// lookarounds) or a program too large to run cheaply is refused then, with a 400 naming the pattern.
import { RE2JS } from "re2js";

/** The built-in detectors, in the order they win an overlap. */
export const DETECTOR_TYPES = ["credential", "payment_card", "iban", "national_id", "email", "phone", "ip_address"] as const;
export type DetectorType = (typeof DETECTOR_TYPES)[number];

export const ACTIONS = ["mask", "hash", "drop"] as const;
export type Action = (typeof ACTIONS)[number];

/**
 * Where a policy applies: each group names what a log, span or OTLP log record carries.
 * messages: the input's messages (and a completion prompt); outputs: the answer's; tool_calls: tool
 * call arguments and tool results, in either; parameters: the model parameters; metadata: metadata
 * values and tags; input_variables: the prompt's input variables; error_messages: a log's error
 * message and a span's status message; span_attributes: span and resource attributes; span_events:
 * span events' attributes; log_bodies: OTLP log records' bodies and attributes.
 */
export const FIELD_GROUPS = [
  "messages",
  "outputs",
  "tool_calls",
  "parameters",
  "metadata",
  "input_variables",
  "error_messages",
  "span_attributes",
  "span_events",
  "log_bodies",
] as const;
export type FieldGroup = (typeof FIELD_GROUPS)[number];

/** Limits of a policy, each checked when it is saved. */
export const POLICY_LIMITS = {
  customPatterns: 20,
  patternLength: 500,
  /** RE2's program size (instructions): the work per character of text is at most proportional to it. */
  programSize: 500,
  nameLength: 64,
} as const;

export interface DetectorRule {
  type: DetectorType;
  action: Action;
  /** phone only: also find numbers written as this country writes them (ISO 3166 alpha-2), besides international ones. */
  region?: string | null;
}

export interface CustomRule {
  name: string;
  pattern: string;
  action: Action;
  /** Match letters in either case. */
  ignore_case?: boolean;
}

/** A policy as stored and answered (the hash key is kept beside it, never answered). */
export interface RedactionPolicy {
  detectors: DetectorRule[];
  custom: CustomRule[];
  fields: FieldGroup[];
}

/** What is stored: the policy and the key of its `hash` action (random per workspace, made once). */
export interface StoredPolicy extends RedactionPolicy {
  hash_key: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

const NAME = /^[A-Za-z0-9_.-]+$/;
const REGION = /^[A-Z]{2}$/;

/** Compiles a custom pattern under RE2, or says why it is refused. */
export function compileCustom(pattern: string, ignoreCase: boolean): { ok: true; re: RE2JS } | { ok: false; message: string } {
  if (pattern.length === 0) return { ok: false, message: "must not be empty" };
  if (pattern.length > POLICY_LIMITS.patternLength) return { ok: false, message: `must be at most ${POLICY_LIMITS.patternLength} characters` };
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    // RE2 refuses what needs backtracking (backreferences, lookarounds) and repeats over 1000.
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, message: `cannot be run in linear time (${why}); write it without backreferences or lookarounds` };
  }
  if (re.programSize() > POLICY_LIMITS.programSize) {
    return { ok: false, message: `is too large to run cheaply on every log (${re.programSize()} steps, at most ${POLICY_LIMITS.programSize}): use smaller repeat counts` };
  }
  if (re.test("")) return { ok: false, message: "matches the empty string: it must match at least one character" };
  return { ok: true, re };
}

/**
 * Checks a policy body (already shaped by the route's schema): detector types once each, a region
 * only for phone, custom names unique and not a detector's, every pattern runnable in linear time.
 */
export function checkPolicy(body: RedactionPolicy): Parsed<RedactionPolicy> {
  const seen = new Set<string>();
  for (const [i, d] of body.detectors.entries()) {
    if (seen.has(d.type)) return { ok: false, field: `detectors[${i}].type`, message: `${d.type} is listed twice` };
    seen.add(d.type);
    if (d.region != null && d.type !== "phone") return { ok: false, field: `detectors[${i}].region`, message: "is only for the phone detector" };
    if (d.region != null && !REGION.test(d.region)) return { ok: false, field: `detectors[${i}].region`, message: "must be a country code of two capital letters (ISO 3166), e.g. US" };
  }
  if (body.custom.length > POLICY_LIMITS.customPatterns) return { ok: false, field: "custom", message: `at most ${POLICY_LIMITS.customPatterns} patterns` };
  const names = new Set<string>();
  for (const [i, c] of body.custom.entries()) {
    if (!NAME.test(c.name) || c.name.length > POLICY_LIMITS.nameLength) {
      return { ok: false, field: `custom[${i}].name`, message: `must be 1 to ${POLICY_LIMITS.nameLength} letters, digits, _ . or -` };
    }
    if ((DETECTOR_TYPES as readonly string[]).includes(c.name)) return { ok: false, field: `custom[${i}].name`, message: `${c.name} is a built-in detector's name` };
    if (names.has(c.name)) return { ok: false, field: `custom[${i}].name`, message: `${c.name} is used twice` };
    names.add(c.name);
    const compiled = compileCustom(c.pattern, c.ignore_case === true);
    if (!compiled.ok) return { ok: false, field: `custom[${i}].pattern`, message: compiled.message };
  }
  const fields = body.fields.length > 0 ? [...new Set(body.fields)] : [...FIELD_GROUPS];
  return {
    ok: true,
    value: {
      detectors: body.detectors.map((d) => ({ type: d.type, action: d.action, ...(d.type === "phone" && d.region ? { region: d.region } : {}) })),
      custom: body.custom.map((c) => ({ name: c.name, pattern: c.pattern, action: c.action, ...(c.ignore_case ? { ignore_case: true } : {}) })),
      fields,
    },
  };
}

/** A stored policy read back (it was checked when saved; anything unreadable redacts nothing rather than failing a write). */
export function readStoredPolicy(raw: unknown): StoredPolicy | null {
  if (!raw || typeof raw !== "object") return null;
  const p = raw as Partial<StoredPolicy>;
  if (!Array.isArray(p.detectors) || !Array.isArray(p.custom) || !Array.isArray(p.fields) || typeof p.hash_key !== "string") return null;
  return p as StoredPolicy;
}

/** The policy as answered: without its hash key. */
export function publicPolicy(stored: StoredPolicy): RedactionPolicy {
  return { detectors: stored.detectors, custom: stored.custom, fields: stored.fields };
}
