// zod faces of the filter group: as a JSON body field (search, dataset versions, imports) and as a
// JSON-encoded query parameter (suggestions). Both run parse.ts, so the rules and messages are one.
import { z } from "@hono/zod-openapi";
import { FILTER_FIELD_NAMES, FILTER_LIMITS, FILTER_OPERATORS, operatorsByFieldText } from "./fields";
import { parseFilterGroup, type FilterGroup, type FilterIssue } from "./parse";

const GROUP_REF = "#/components/schemas/StructuredFilterGroup";

/** Documentation only: the shape of one filter, for /openapi.json. */
export const StructuredFilterDoc = z
  .object({
    field: z.enum(FILTER_FIELD_NAMES as [string, ...string[]]),
    operator: z.enum(FILTER_OPERATORS),
    value: z.union([z.string(), z.number(), z.boolean(), z.array(z.unknown()), z.null()]).optional(),
    nested_key: z.string().nullable().optional().openapi({ description: "Required for metadata, output, input_variables, scores (the score's name), redactions (the detector's name) and signals (the signal's current name in this workspace; a name of no signal matches no log for is_true, is_false and is_not_null, and every log for is_null)." }),
  })
  .openapi("StructuredFilter", {
    description: `One condition on a request-log field. The operators each field takes: ${operatorsByFieldText()}. Any other pair is a 400 that names the operators the field takes.`,
  });

const groupDoc = {
  type: "object" as const,
  description: `Filters combined with AND or OR, nested up to ${FILTER_LIMITS.maxDepth} levels, at most ${FILTER_LIMITS.maxFilters} filters in all.`,
  required: ["filters"],
  properties: {
    logic: { type: "string" as const, enum: ["AND", "OR"], default: "AND" },
    filters: {
      type: "array" as const,
      items: { oneOf: [{ $ref: "#/components/schemas/StructuredFilter" }, { $ref: GROUP_REF }] },
    },
  },
};

/** A zod transform running a filter language's parser: its issues become zod issues at their paths. */
export function groupTransform<G>(parse: (value: unknown) => { ok: true; group: G } | { ok: false; issues: FilterIssue[] }) {
  return (value: unknown, ctx: z.core.$RefinementCtx): G => {
    const parsed = parse(value);
    if (!parsed.ok) {
      for (const issue of parsed.issues) ctx.addIssue({ code: "custom", message: issue.rule, path: issue.path, input: value });
      return z.NEVER;
    }
    return parsed.group;
  };
}

const toGroup: (value: unknown, ctx: z.core.$RefinementCtx) => FilterGroup = groupTransform(parseFilterGroup);

/** A filter group in a JSON body. */
export const FilterGroupSchema = z.unknown().transform(toGroup).openapi("StructuredFilterGroup", groupDoc);

/** A filter group JSON-encoded in a query parameter. */
export const FilterGroupQuery = z
  .string()
  .transform((text, ctx) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be a JSON-encoded filter group", input: text });
      return z.NEVER;
    }
    return toGroup(value, ctx);
  })
  .openapi({ type: "string", description: "A JSON-encoded StructuredFilterGroup, the same syntax as request-log search." });
