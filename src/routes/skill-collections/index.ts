// Skill collections: create (JSON or ZIP), save versions, rename, list, and pull (JSON or ZIP).
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import type { SkillCollectionVersionRow } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { maxBytesOf } from "../../http/middleware";
import { defineRoute } from "../../http/openapi";
import { zipStream } from "../../lib/zip";
import { externalIdRoutes } from "../external-ids";
import { collectionExists, collectionExternalIds, collectionView, createCollection, createVersion, listCollections, normalizePath, renameCollection, requireCollection, selectVersion, versionFiles, versionView, type NewFile, type SkillStore } from "../../services/registry";
import {
  CreateCollectionBody,
  CreateCollectionResponse,
  CreateVersionBody,
  CreateVersionResponse,
  GetCollectionResponse,
  GetQuery,
  IdentifierParam,
  ListCollectionsResponse,
  ListQuery,
  MultipartBody,
  RenameBody,
  RenameResponse,
  SkillCollectionIdParam,
} from "./schemas";
import { readUpload } from "./upload";

const TAGS = ["skill collections"];
const BASE = "/api/public/v2/skill-collections";
const UPLOAD_NOTE =
  " As JSON (file contents inline) or as multipart/form-data: the fields as a JSON string in `metadata` or `json`, " +
  "a ZIP archive in `archive`, `zip` or `files`. Paths are relative and normalized; a file is at most 5 MiB, a version " +
  "at most 1,000 files and SKILL_VERSION_MAX_BYTES in all; a ZIP is checked for those limits and its compression ratio while it inflates.";

const createRoute = defineRoute({
  method: "post",
  path: BASE,
  scope: "tools:write",
  tags: TAGS,
  summary: "Create a skill collection",
  description: `Creates the collection and its version 1 with the given files.${UPLOAD_NOTE}`,
  errors: [409],
  bodyLimit: "SKILL_JSON_MAX_BYTES",
  multipartLimit: "SKILL_UPLOAD_MAX_BYTES",
  request: {
    body: { required: false, content: { "application/json": { schema: CreateCollectionBody }, "multipart/form-data": MultipartBody } },
  },
  responses: {
    201: { description: "Created", content: { "application/json": { schema: CreateCollectionResponse } } },
  },
});

const versionRoute = defineRoute({
  method: "post",
  path: `${BASE}/{identifier}/versions`,
  scope: "tools:write",
  tags: TAGS,
  summary: "Save a skill collection version",
  description:
    "A new version: the previous files with `moves` (file or folder), then `deletes` (file or folder), then `file_updates` " +
    "(create or overwrite) applied; with a ZIP archive, the archive's files replace the previous ones first. " +
    `A \`release_label\` names one version of the collection: giving it to the new version moves it.${UPLOAD_NOTE}`,
  errors: [404, 409],
  bodyLimit: "SKILL_JSON_MAX_BYTES",
  multipartLimit: "SKILL_UPLOAD_MAX_BYTES",
  request: {
    params: IdentifierParam,
    body: { required: false, content: { "application/json": { schema: CreateVersionBody }, "multipart/form-data": MultipartBody } },
  },
  responses: {
    201: { description: "Saved", content: { "application/json": { schema: CreateVersionResponse } } },
  },
});

const renameRoute = defineRoute({
  method: "patch",
  path: `${BASE}/{identifier}`,
  scope: "tools:write",
  tags: TAGS,
  summary: "Rename a skill collection",
  description: "Changes the name only (no new version; root_path stays, so pulls by root path keep working).",
  errors: [404, 409],
  request: { params: IdentifierParam, body: { required: true, content: { "application/json": { schema: RenameBody } } } },
  responses: {
    200: { description: "Renamed", content: { "application/json": { schema: RenameResponse } } },
  },
});

const getRoute = defineRoute({
  method: "get",
  path: `${BASE}/{identifier}`,
  scope: "tools:read",
  tags: TAGS,
  summary: "Pull a skill collection",
  description:
    "The collection, the selected version (newest, `version=N` or `label=L`) and its files (path → content). " +
    "`format=zip` answers the version's files as an application/zip archive instead.",
  errors: [404],
  request: { params: IdentifierParam, query: GetQuery },
  responses: {
    200: {
      description: "The collection and its files",
      content: {
        "application/json": { schema: GetCollectionResponse },
        "application/zip": { schema: { type: "string", format: "binary" } },
      },
    },
  },
});

const listRoute = defineRoute({
  method: "get",
  path: BASE,
  scope: "tools:read",
  tags: TAGS,
  summary: "List skill collections",
  request: { query: ListQuery },
  responses: {
    200: { description: "The workspace's collections", content: { "application/json": { schema: ListCollectionsResponse } } },
  },
});

/** The JSON body the route's validator parsed (the route also takes multipart, which it leaves alone). */
function validJson<T>(c: Context<AppEnv>): T {
  return (c.req as unknown as { valid(target: "json"): T }).valid("json");
}

async function externalIdsOf(c: Context<AppEnv>, id: string) {
  return (await collectionExternalIds(c.var.deps.db, c.get("auth").workspaceId, [id])).get(id) ?? [];
}

function storeOf(c: Context<AppEnv>): SkillStore {
  return { db: c.var.deps.db, blobs: c.var.deps.blobs, maxVersionBytes: maxBytesOf(c.var.deps.env, "SKILL_VERSION_MAX_BYTES") };
}

const utf8 = new TextEncoder();
const asNewFiles = (files: { path: string; content: string }[]): NewFile[] => files.map((f) => ({ path: f.path, content: utf8.encode(f.content) }));

function rootPathOf(raw: string | null | undefined): string | null {
  if (raw == null) return null;
  const r = normalizePath(raw.replace(/^\/+/, ""));
  if (!r.ok) throw new ApiError("validation_error", `root_path: ${r.message}`);
  return r.path;
}

/** A JSON document whose `files` object is written file by file, so a large version never sits whole in memory. */
function streamJson(head: Record<string, unknown>, files: AsyncIterable<{ path: string; data: Uint8Array }>): ReadableStream<Uint8Array> {
  const iterator = files[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let first = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(utf8.encode(`${JSON.stringify(head).slice(0, -1)},"files":{`));
    },
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) {
        controller.enqueue(utf8.encode("}}"));
        controller.close();
        return;
      }
      const piece = `${first ? "" : ","}${JSON.stringify(next.value.path)}:${JSON.stringify(decoder.decode(next.value.data))}`;
      first = false;
      controller.enqueue(utf8.encode(piece));
    },
    async cancel() {
      await iterator.return?.(undefined);
    },
  });
}

function zipName(name: string, version: SkillCollectionVersionRow): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "skill-collection";
  return `${safe}-v${version.number}.zip`;
}

export function registerSkillCollectionRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(createRoute, async (c) => {
    const { body, archive } = await readUpload(c, CreateCollectionBody, validJson(c), { metadataRequired: true });
    const { collection, version, externalIds } = await createCollection(storeOf(c), c.get("auth"), {
      name: body.name,
      folder_id: body.folder_id,
      provider: body.provider,
      root_path: rootPathOf(body.root_path),
      commit_message: body.commit_message,
      external_ids: body.external_ids,
      archive,
      files: asNewFiles(body.files),
    });
    return c.json(
      { success: true as const, skill_collection: collectionView(collection, externalIds), external_ids: externalIds, version: versionView(version) },
      201,
    );
  });

  app.openapi(versionRoute, async (c) => {
    const { identifier } = c.req.valid("param");
    const { body, archive } = await readUpload(c, CreateVersionBody, validJson(c), { metadataRequired: false });
    const { collection, version } = await createVersion(storeOf(c), c.get("auth"), identifier, {
      archive,
      file_updates: asNewFiles(body.file_updates),
      moves: body.moves,
      deletes: body.deletes,
      commit_message: body.commit_message,
      release_label: body.release_label,
      provider: body.provider,
    });
    const ext = await externalIdsOf(c, collection.id);
    return c.json({ success: true as const, version: versionView(version), skill_collection: collectionView(collection, ext) }, 201);
  });

  app.openapi(renameRoute, async (c) => {
    const { identifier } = c.req.valid("param");
    const { name } = c.req.valid("json");
    const collection = await renameCollection(c.var.deps.db, c.get("auth"), identifier, name);
    return c.json({ success: true as const, skill_collection: collectionView(collection, await externalIdsOf(c, collection.id)) }, 200);
  });

  app.openapi(listRoute, async (c) => {
    const db = c.var.deps.db;
    const { workspaceId } = c.get("auth");
    const rows = await listCollections(db, workspaceId, c.req.valid("query"));
    const ext = await collectionExternalIds(db, workspaceId, rows.map((r) => r.id));
    return c.json({ success: true as const, skill_collections: rows.map((r) => collectionView(r, ext.get(r.id))) }, 200);
  });

  app.openapi(getRoute, async (c) => {
    const { identifier } = c.req.valid("param");
    const q = c.req.valid("query");
    if (q.version !== undefined && q.label !== undefined) throw new ApiError("validation_error", "version: give version or label, not both");
    const db = c.var.deps.db;
    const { workspaceId } = c.get("auth");
    const collection = await requireCollection(db, workspaceId, identifier);
    const version = await selectVersion(db, collection, q);
    const files = versionFiles(c.var.deps.blobs, workspaceId, version?.manifest ?? []);
    if (q.format === "zip") {
      const entries = (async function* () {
        for await (const f of files) yield { name: f.path, read: async () => f.data };
      })();
      return c.body(zipStream(entries), 200, {
        "Content-Type": "application/zip",
        "Content-Disposition": `attachment; filename="${zipName(collection.name, version ?? ({ number: 0 } as SkillCollectionVersionRow))}"`,
      });
    }
    const ext = await externalIdsOf(c, collection.id);
    const head = { success: true, skill_collection: collectionView(collection, ext), version: version ? versionView(version) : null };
    return c.body(streamJson(head, files), 200, { "Content-Type": "application/json; charset=utf-8" }) as never;
  });

  externalIdRoutes<string>(app, {
    entityType: "skill_collection",
    area: "tools",
    basePath: BASE,
    idParam: "skill_collection_id",
    idSchema: SkillCollectionIdParam,
    label: "skill collection",
    tag: TAGS[0],
    exists: collectionExists,
  });
}
