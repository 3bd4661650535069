// Zod schemas shared by several resources: timestamps, the error shape, prompt blueprints.
// The same schemas validate requests and feed /openapi.json.
import { z } from "@hono/zod-openapi";
import { parseTimestamp } from "./time";

/** ISO 8601 or epoch seconds/milliseconds in, epoch milliseconds out. */
export const Timestamp = z
  .union([z.string(), z.number()])
  .transform((v, ctx) => {
    const r = parseTimestamp(v);
    if (!r.ok) {
      ctx.addIssue({ code: "custom", message: r.reason });
      return z.NEVER;
    }
    return r.ms;
  })
  .openapi({
    description:
      "ISO 8601 date-time (Z, an offset, or none meaning UTC) or an epoch number (seconds below 1e11, milliseconds otherwise).",
    example: "2024-01-15T10:30:00Z",
  });

export const ErrorSchema = z
  .object({
    success: z.literal(false),
    message: z.string().openapi({ description: "Human-readable; for validation errors it names the field and the rule." }),
    error: z.string().openapi({ description: "Machine-readable code", example: "validation_error" }),
    details: z.array(z.object({ field: z.string(), rule: z.string() })).optional(),
  })
  .openapi("Error", {
    description:
      "Every failure. The correlation id is in the X-Request-Id header (and the service's log line), never in the body: " +
      "PromptLayer clients read a body's request_id as a request log's id.",
  });

const TEXT_LIKE: Record<string, string> = { text: "text", thinking: "thinking" };

/** A content block: `type` plus the fields of that type; text and thinking blocks must carry their string. */
export const ContentBlock = z
  .looseObject({ type: z.string().min(1, "must be a non-empty string") })
  .superRefine((b, ctx) => {
    const field = TEXT_LIKE[b.type];
    if (field && typeof (b as Record<string, unknown>)[field] !== "string") {
      ctx.addIssue({ code: "custom", path: [field], message: `must be a string in a ${b.type} block` });
    }
  })
  .openapi("ContentBlock", { example: { type: "text", text: "Hello!" } });

export const ContentBlocks = z.array(ContentBlock, {
  error: (iss) =>
    typeof iss.input === "string"
      ? "must be an array of content blocks, not a plain string"
      : "must be an array of content blocks",
});

const ROLES = ["system", "user", "assistant", "function", "tool", "placeholder", "developer"] as const;
/** Roles whose content may be null or absent (an assistant turn that only calls tools, say). */
const CONTENT_OPTIONAL = new Set(["assistant", "function", "placeholder"]);

export const Message = z
  .looseObject({
    role: z.enum(ROLES, { error: `must be one of ${ROLES.join(", ")}` }),
    content: ContentBlocks.nullish(),
  })
  .superRefine((m, ctx) => {
    if (m.content == null && !CONTENT_OPTIONAL.has(m.role)) {
      ctx.addIssue({ code: "custom", path: ["content"], message: `is required for a ${m.role} message (an array of content blocks)` });
    }
  })
  .openapi("Message");

export const ChatBlueprint = z
  .looseObject({
    type: z.literal("chat"),
    messages: z.array(Message),
    tools: z.array(z.looseObject({})).nullish(),
    functions: z.array(z.looseObject({})).nullish(),
    input_variables: z.array(z.string()).optional(),
  })
  .openapi("ChatPrompt");

export const CompletionBlueprint = z
  .looseObject({
    type: z.literal("completion"),
    content: ContentBlocks,
    input_variables: z.array(z.string()).optional(),
  })
  .openapi("CompletionPrompt");

export const PromptBlueprint = z
  .discriminatedUnion("type", [ChatBlueprint, CompletionBlueprint], {
    error: (iss) => (iss.code === "invalid_union" ? 'must be "chat" or "completion"' : undefined),
  })
  .openapi("PromptBlueprint");

export const PromptVersionSchema = z
  .object({
    id: z.int(),
    prompt_id: z.int(),
    prompt_name: z.string(),
    version: z.int(),
    prompt_template: z.record(z.string(), z.unknown()),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    commit_message: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("PromptVersion");

/** A positive integer id in the path (or query), e.g. /requests/{request_id}. */
export const IdParam = (name: string) =>
  z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, "must be a positive integer")
    .transform((v) => Number(v))
    .refine((n) => Number.isSafeInteger(n), "must be a positive integer")
    .openapi({ param: { name, in: "path" }, type: "integer", minimum: 1, example: 12345 });

/** A UUID (tables, sheets, columns, cells), any case in, lower case out. */
export const Uuid = z
  .string("must be a UUID")
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "must be a UUID")
  .transform((v) => v.toLowerCase());

/** A UUID in the path. */
export const UuidParam = (name: string) =>
  Uuid.openapi({ param: { name, in: "path" }, type: "string", format: "uuid", example: "0b7e1c52-4a0e-4b8e-9a55-3f0b0e4b7d11" });

/**
 * A name or label: 1 to `max` characters, not only white space, no control characters (NUL, new
 * lines, tabs…) and no lone UTF-16 surrogates (they cannot be stored as UTF-8). Every name field
 * of the API uses it, so the rules and messages are the same everywhere.
 */
export const NameText = (max: number) =>
  z
    .string()
    .min(1, `must be 1 to ${max} characters`)
    .max(max, `must be 1 to ${max} characters`)
    .refine((s) => s.trim().length > 0, "must not be only white space")
    .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters")
    .refine((s) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s), "must not contain lone UTF-16 surrogates");
