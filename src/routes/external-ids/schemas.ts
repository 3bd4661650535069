// Zod schemas of external IDs, shared by every resource that carries them (bodies, responses, list lookups).
import { z } from "@hono/zod-openapi";

export const ExternalIdSource = z.string().min(1, "must be 1 to 128 characters").max(128, "must be 1 to 128 characters");
export const ExternalIdValue = z.string().min(1, "must be 1 to 512 characters").max(512, "must be 1 to 512 characters");

export const ExternalId = z
  .object({
    source: ExternalIdSource.openapi({ description: "The external system or namespace that owns the ID (1 to 128 characters).", example: "crm" }),
    external_id: ExternalIdValue.openapi({ description: "The identifier in the external system (1 to 512 characters).", example: "acct-42" }),
  })
  .openapi("ExternalId");

/** `external_ids` accepted on create: repeats of one mapping count once. */
export const ExternalIdsInput = z.array(ExternalId).max(100, "at most 100 mappings").nullish();

/**
 * Spread into a list endpoint's query schema; pass the parsed query to resolveExternalIdLookup
 * (src/services/registry/external-ids.ts), which also refuses one parameter without the other.
 */
export const ExternalIdLookupShape = {
  external_source: ExternalIdSource.optional().openapi({ description: "With external_id: only the entity carrying this mapping." }),
  external_id: ExternalIdValue.optional().openapi({ description: "With external_source: only the entity carrying this mapping." }),
};
