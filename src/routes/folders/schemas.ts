// Answer schemas of the folder endpoints.
import { z } from "@hono/zod-openapi";
import { FOLDER_ENTITY_TYPES } from "../../db/schema/registry";
import { ExternalId } from "../external-ids/schemas";

export const Folder = z
  .object({
    id: z.int(),
    name: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    path: z.array(z.object({ id: z.int(), name: z.string() })).openapi({ description: "The folder's ancestors, root first; [] at root level." }),
    workspace_id: z.int(),
    parent_id: z.int().nullable(),
    external_ids: z.array(ExternalId),
  })
  .openapi("Folder");
export const FolderResponse = z.object({ success: z.literal(true), folder: Folder }).openapi("FolderResponse");

export const FolderEntity = z
  .object({
    id: z.union([z.int(), z.string()]),
    name: z.string(),
    type: z.enum(FOLDER_ENTITY_TYPES),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
    folder_id: z.int().nullable(),
    path: z.array(z.string()).openapi({ description: "Names of the folders from the root down to the containing folder." }),
    external_ids: z.array(ExternalId),
    metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .openapi("FolderEntity");
