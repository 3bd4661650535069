// Folders: create, rename, list what a folder holds (every registered entity type), external IDs.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { QueryBool, QueryInt, QueryList, ResourceFilterShape, SortBy } from "../../lib/query";
import { NameText, IdParam } from "../../lib/schemas";
import { FOLDER_ENTITY_TYPES, type FolderEntityType } from "../../db/schema";
import { requireOwnWorkspace } from "../../http/workspace";
import { purgesPromptCache } from "../../http/prompt-cache";
import { createFolder, deleteFolderEntities, FOLDER_ENTITY_SOURCES, folderExists, listFolderEntities, moveFolderEntities, renameFolder, resolveFolderPath } from "../../services/registry";
import { externalIdRoutes } from "../external-ids";
import { ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";
import { FolderEntity, FolderResponse } from "./schemas";

const FolderName = NameText(255);


const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const tags = ["folders"];

const create = defineRoute({
  method: "post",
  path: "/api/public/v2/folders",
  scope: "prompts:write",
  tags,
  summary: "Create a folder",
  description: "name is unique within its parent (or at root level): a duplicate is a 409. An unknown parent_id is a 404.",
  errors: [404, 409],
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z
            .object({ name: FolderName, parent_id: z.int().positive("must be a positive integer").nullish(), workspace_id: z.int().nullish(), external_ids: ExternalIdsInput })
            .openapi("CreateFolderRequest"),
        },
      },
    },
  },
  responses: { 201: json(FolderResponse, "Created") },
});

const rename = defineRoute({
  method: "patch",
  path: "/api/public/v2/folders/{folder_id}",
  scope: "prompts:write",
  tags,
  summary: "Rename a folder",
  description: "A sibling folder with the same name is a 409.",
  errors: [404, 409],
  request: {
    params: z.object({ folder_id: IdParam("folder_id") }),
    body: { required: true, content: { "application/json": { schema: z.object({ name: FolderName }).openapi("UpdateFolderRequest") } } },
  },
  responses: { 200: json(FolderResponse, "Renamed") },
});

const entities = defineRoute({
  method: "get",
  path: "/api/public/v2/folders/entities",
  scope: "prompts:read",
  tags,
  summary: "List what a folder holds",
  description:
    "Folders, prompts, tool registry entries (and every other registered type) directly in folder_id (root level when absent), " +
    "or everywhere below it with flatten=true. With external_source/external_id the lookup covers the whole workspace (or folder_id's subtree). " +
    "created_by_email and the created/updated bounds filter every type (an evaluation's creator is its user).",
  errors: [404],
  request: {
    query: z.object({
      workspace_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
      folder_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
      filter_type: QueryList(z.enum(FOLDER_ENTITY_TYPES, { error: `must be one of ${FOLDER_ENTITY_TYPES.join(", ")}` })).optional(),
      search_query: z.string().max(255).optional(),
      flatten: QueryBool.optional(),
      include_metadata: QueryBool.optional(),
      ...ResourceFilterShape,
      sort_by: SortBy,
      sort_order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).optional(),
      ...ExternalIdLookupShape,
    }),
  },
  responses: { 200: json(z.object({ success: z.literal(true), entities: z.array(FolderEntity) }).openapi("ListFolderEntitiesResponse"), "The entities") },
});

const MAX_ENTITIES = 500;
const EntityReference = z
  .object({
    id: z
      .union([z.int().positive("must be a positive integer"), z.uuid("must be a positive integer or a UUID")])
      .openapi({ description: "The entity's id: an integer, or a UUID for skill collections." }),
    type: z.enum(FOLDER_ENTITY_TYPES, { error: `must be one of ${FOLDER_ENTITY_TYPES.join(", ")}` }).openapi({
      description: "SNIPPET names the same prompts as PROMPT; AB_TEST names A/B releases (deleting one reverts its label to its base mapping). INPUT_VARIABLE_SET entities do not exist here: any id of theirs is a 404.",
    }),
  })
  .openapi("EntityReference");
const EntityList = z.array(EntityReference).min(1, `must list 1 to ${MAX_ENTITIES} entities`).max(MAX_ENTITIES, `must list 1 to ${MAX_ENTITIES} entities`);
const CountResponse = z.object({ success: z.literal(true), moved_count: z.int() }).openapi("FolderEntitiesCountResponse");

const move = defineRoute({
  method: "post",
  path: "/api/public/v2/folders/entities",
  scope: "prompts:write",
  // Prompts move or go with these: their reads in the edge cache are purged (src/http/prompt-cache.ts).
  middleware: [purgesPromptCache],
  tags,
  summary: "Move entities into a folder",
  description:
    `Moves up to ${MAX_ENTITIES} entities into folder_id (the workspace root when null or absent), all or none: ` +
    "any unknown or foreign entity or folder is a 404 and nothing moves. A folder cannot move into itself or below itself (400); " +
    "a folder whose name the destination already holds is a 409. moved_count counts the entities named.",
  errors: [404, 409],
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z
            .object({ entities: EntityList, folder_id: z.int().positive("must be a positive integer").nullish(), workspace_id: z.int().nullish() })
            .openapi("MoveFolderEntitiesRequest"),
        },
      },
    },
  },
  responses: { 200: json(CountResponse, "Moved") },
});

const remove = defineRoute({
  method: "delete",
  path: "/api/public/v2/folders/entities",
  scope: "prompts:write",
  // Prompts move or go with these: their reads in the edge cache are purged (src/http/prompt-cache.ts).
  middleware: [purgesPromptCache],
  tags,
  summary: "Delete entities",
  description:
    `Deletes up to ${MAX_ENTITIES} entities, all or none (an unknown or foreign one is a 404 and nothing is deleted). ` +
    "Prompts, workflows and tool registry entries are deleted with their versions, labels and external IDs (request logs keep what they recorded); " +
    "datasets, evaluations and skill collections are archived as their own delete operations do, and their external IDs are released. " +
    "A folder that holds anything is a 400 unless cascade=true, which deletes everything below it. moved_count counts every entity deleted, folder contents included.",
  errors: [404],
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z.object({ entities: EntityList, cascade: z.boolean().default(false), workspace_id: z.int().nullish() }).openapi("DeleteFolderEntitiesRequest"),
        },
      },
    },
  },
  responses: { 200: json(CountResponse, "Deleted") },
});

const resolveId = defineRoute({
  method: "get",
  path: "/api/public/v2/folders/resolve-id",
  scope: "prompts:read",
  tags,
  summary: "Resolve a folder path to its id",
  description:
    'path is the folder names from the root down, joined by dots ("Team.Evals"). A name that itself holds dots is matched whole ' +
    "(each step tries every child whose name fits); an unknown path is a 404.",
  errors: [404],
  request: {
    query: z.object({
      workspace_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
      path: z.string().min(1, "must be 1 to 4096 characters").max(4096, "must be 1 to 4096 characters"),
    }),
  },
  responses: { 200: json(z.object({ success: z.literal(true), id: z.int() }).openapi("ResolveFolderIdResponse"), "The folder's id") },
});

export function registerFolderRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const auth = c.get("auth");
    requireOwnWorkspace(auth, body.workspace_id);
    return c.json({ success: true as const, folder: await createFolder(c.var.deps.db, auth, body) }, 201);
  });

  app.openapi(rename, async (c) => {
    const { folder_id } = c.req.valid("param");
    return c.json({ success: true as const, folder: await renameFolder(c.var.deps.db, c.get("auth").workspaceId, folder_id, c.req.valid("json").name) }, 200);
  });

  app.openapi(entities, async (c) => {
    const q = c.req.valid("query");
    const auth = c.get("auth");
    requireOwnWorkspace(auth, q.workspace_id);
    const list = await listFolderEntities(c.var.deps.db, auth.workspaceId, FOLDER_ENTITY_SOURCES, { ...q, filter_type: q.filter_type as FolderEntityType[] | undefined });
    return c.json({ success: true as const, entities: list }, 200);
  });

  app.openapi(move, async (c) => {
    const body = c.req.valid("json");
    const auth = c.get("auth");
    requireOwnWorkspace(auth, body.workspace_id);
    const moved = await moveFolderEntities(c.var.deps.db, auth.workspaceId, FOLDER_ENTITY_SOURCES, body.entities, body.folder_id ?? null);
    return c.json({ success: true as const, moved_count: moved }, 200);
  });

  app.openapi(remove, async (c) => {
    const body = c.req.valid("json");
    const auth = c.get("auth");
    requireOwnWorkspace(auth, body.workspace_id);
    const deleted = await deleteFolderEntities(c.var.deps.db, auth, FOLDER_ENTITY_SOURCES, body.entities, body.cascade);
    return c.json({ success: true as const, moved_count: deleted }, 200);
  });

  app.openapi(resolveId, async (c) => {
    const q = c.req.valid("query");
    const auth = c.get("auth");
    requireOwnWorkspace(auth, q.workspace_id);
    return c.json({ success: true as const, id: await resolveFolderPath(c.var.deps.db, auth.workspaceId, q.path) }, 200);
  });

  externalIdRoutes(app, {
    area: "prompts",
    entityType: "folder",
    basePath: "/api/public/v2/folders",
    idParam: "folder_id",
    label: "folder",
    tag: "folders",
    exists: folderExists,
  });
}
