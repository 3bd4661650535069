// Request and response schemas of the skill collection endpoints (they also feed /openapi.json).
import { z } from "@hono/zod-openapi";
import { SKILL_PROVIDERS } from "../../db/schema";
import { IdParam } from "../../lib/schemas";
import { ExternalId as ExternalIdOut, ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";
import { looksLikeUuid, SKILL_MAX_FILES } from "../../services/registry";
import { QueryInt, ResourceFilterShape, SortBy, SortOrder } from "../../lib/query";

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

const Provider = z
  .enum(SKILL_PROVIDERS, { error: `must be one of ${SKILL_PROVIDERS.join(", ")}` })
  .openapi({ description: "The agent layout of the collection; null is universal (no provider)." });

export const CollectionName = z
  .string()
  .min(1, "must not be empty")
  .max(255, "must be at most 255 characters")
  .refine((s) => s.trim() === s, "must not start or end with whitespace")
  .refine((s) => !CONTROL.test(s), "must not contain control characters")
  .refine((s) => !looksLikeUuid(s), "must not be a UUID (a UUID identifies a collection by id)");

const Label = z
  .string()
  .min(1, "must not be empty")
  .max(255, "must be at most 255 characters")
  .refine((s) => !CONTROL.test(s), "must not contain control characters");

const FileEntry = z
  .looseObject({
    path: z.string().openapi({ description: "Relative, `/`-separated; no `..`, backslashes or empty names.", example: "skills/refunds/SKILL.md" }),
    content: z.string().nullish().transform((v) => v ?? "").openapi({ type: "string", description: "UTF-8 text, at most 5 MiB." }),
  })
  .openapi("SkillFile");

export const CreateCollectionBody = z
  .looseObject({
    name: CollectionName,
    folder_id: z.int().positive("must be a positive integer").nullish(),
    provider: Provider.nullish(),
    root_path: z
      .string()
      .nullish()
      .openapi({ description: "Where the collection's files live, e.g. `support/refunds` (an identifier too). Default: derived from the name." }),
    files: z.array(FileEntry).nullish().transform((v) => v ?? []),
    commit_message: z.string().nullish(),
    external_ids: ExternalIdsInput,
  })
  .openapi("CreateSkillCollectionRequest");

const Move = z
  .looseObject({
    old_path: z.string().optional(),
    new_path: z.string().optional(),
    from: z.string().optional().openapi({ description: "Alias of old_path (the SDK's name)." }),
    to: z.string().optional().openapi({ description: "Alias of new_path (the SDK's name)." }),
  })
  .superRefine((m, ctx) => {
    if ((m.old_path ?? m.from) === undefined) ctx.addIssue({ code: "custom", path: ["old_path"], message: "is required" });
    if ((m.new_path ?? m.to) === undefined) ctx.addIssue({ code: "custom", path: ["new_path"], message: "is required" });
  })
  .transform((m) => ({ from: (m.old_path ?? m.from)!, to: (m.new_path ?? m.to)! }))
  .openapi("SkillFileMove");

export const CreateVersionBody = z
  .looseObject({
    file_updates: z.array(FileEntry).nullish().transform((v) => v ?? []),
    // Each move or delete scans the file set: capped so a request's work stays bounded.
    moves: z.array(Move).max(SKILL_MAX_FILES, `must have at most ${SKILL_MAX_FILES} items`).nullish().transform((v) => v ?? []),
    deletes: z.array(z.string()).max(SKILL_MAX_FILES, `must have at most ${SKILL_MAX_FILES} items`).nullish().transform((v) => v ?? []),
    commit_message: z.string().nullish(),
    release_label: Label.nullish(),
    provider: Provider.nullish(),
  })
  .openapi("SaveSkillCollectionVersionRequest");

export const RenameBody = z.looseObject({ name: CollectionName.nullish() }).openapi("UpdateSkillCollectionRequest");

export const IdentifierParam = z.object({
  identifier: z
    .string()
    .min(1)
    .openapi({
      param: { name: "identifier", in: "path" },
      description: "The collection's UUID, its name, or its root_path, percent-encoded (a `/` is `%2F`).",
      example: "customer-support-skills",
    }),
});

const MultipartDoc = {
  type: "object" as const,
  properties: {
    metadata: { type: "string" as const, description: "The JSON body's fields as a JSON string." },
    json: { type: "string" as const, description: "Alias of metadata." },
    archive: { type: "string" as const, format: "binary", description: "The ZIP archive." },
    zip: { type: "string" as const, format: "binary", description: "Alias of archive." },
    files: { type: "string" as const, format: "binary", description: "Alias of archive (the official SDK's part name)." },
  },
};

export const MultipartBody = { schema: MultipartDoc };

export const SkillCollectionOut = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    workspace_id: z.int(),
    folder_id: z.int().nullable(),
    root_path: z.string(),
    name: z.string(),
    provider: z.string().nullable(),
    is_deleted: z.boolean(),
    created_by: z.int().nullable(),
    created_at: z.string(),
    updated_by: z.int().nullable(),
    updated_at: z.string(),
    external_ids: z.array(ExternalIdOut),
  })
  .openapi("SkillCollection");

export const SkillCollectionVersionOut = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    skill_collection_id: z.string().openapi({ format: "uuid" }),
    workspace_id: z.int(),
    number: z.int(),
    root_path_at_version: z.string(),
    provider: z.string().nullable(),
    file_paths: z.array(z.string()),
    commit_message: z.string().nullable(),
    release_label: z.string().nullable(),
    archived: z.boolean(),
    created_by: z.int().nullable(),
    user_email: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("SkillCollectionVersion");

export const CreateCollectionResponse = z
  .object({
    success: z.literal(true),
    skill_collection: SkillCollectionOut,
    external_ids: z.array(ExternalIdOut),
    version: SkillCollectionVersionOut,
  })
  .openapi("CreateSkillCollectionResponse");

export const CreateVersionResponse = z
  .object({ success: z.literal(true), version: SkillCollectionVersionOut, skill_collection: SkillCollectionOut })
  .openapi("SaveSkillCollectionVersionResponse");

export const RenameResponse = z.object({ success: z.literal(true), skill_collection: SkillCollectionOut }).openapi("UpdateSkillCollectionResponse");

export const GetCollectionResponse = z
  .object({
    success: z.literal(true),
    skill_collection: SkillCollectionOut,
    version: SkillCollectionVersionOut.nullable(),
    files: z.record(z.string(), z.string()).openapi({ description: "path → content (UTF-8 text)" }),
  })
  .openapi("GetSkillCollectionResponse");

export const ListCollectionsResponse = z
  .object({ success: z.literal(true), skill_collections: z.array(SkillCollectionOut) })
  .openapi("ListSkillCollectionsResponse");

export const GetQuery = z.object({
  format: z.enum(["zip", "json"], { error: "must be zip or json" }).optional(),
  // Nine digits at most, as versions are stored.
  version: QueryInt(1, 999_999_999, { overMax: "must be a positive integer" }).optional(),
  label: Label.optional(),
});

export const ListQuery = z.object({
  folder_id: IdParam("folder_id").optional().openapi({ param: { name: "folder_id", in: "query" }, description: "Only the collections directly in this folder." }),
  ...ExternalIdLookupShape,
  ...ResourceFilterShape,
  sort_by: SortBy,
  sort_order: SortOrder,
});

/** The id in the external-ID routes' paths: a collection's UUID (names and root paths are for the other routes). */
export const SkillCollectionIdParam = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "must be a UUID")
  .transform((s) => s.toLowerCase())
  .openapi({ param: { name: "skill_collection_id", in: "path" }, format: "uuid" });
