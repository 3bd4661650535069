// externalIdRoutes: the one route factory for attaching, listing and detaching external IDs, called
// once per entity type (POST|GET {base}/{id}/external-ids, DELETE {base}/{id}/external-ids/{source}/{external_id}).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import type { Db } from "../../db/client";
import type { ExternalIdEntityType } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import type { ScopeArea } from "../../lib/scopes";
import { defineRoute } from "../../http/openapi";
import { IdParam } from "../../lib/schemas";
import { attachExternalId, detachExternalId, listExternalIds } from "../../services/registry";
import { ExternalId, ExternalIdSource, ExternalIdValue } from "./schemas";

export interface ExternalIdRouteOptions<Id extends string | number = number> {
  entityType: ExternalIdEntityType;
  /** The entity's collection path, e.g. "/api/public/v2/tool-registry". */
  basePath: string;
  /** Name of the id path parameter, e.g. "tool_id". */
  idParam: string;
  /** Parses the id path parameter (default: a positive integer id). */
  idSchema?: z.ZodType<Id>;
  /** Words for docs and messages, e.g. "tool registry entry". */
  label: string;
  /** OpenAPI tag the routes are listed under. */
  tag: string;
  /** The scope area of the entity (lib/scopes.ts): listing needs its read scope, attaching and detaching its write scope. */
  area: ScopeArea;
  /** Whether the entity exists in the caller's workspace (else 404, whoever owns it). */
  exists: (db: Db, workspaceId: number, id: Id) => Promise<boolean>;
  /** Run around attach and detach (prompt templates purge the edge cache of their reads). */
  writeMiddleware?: MiddlewareHandler<AppEnv>[];
}

const AttachResponse = z.object({ success: z.literal(true), external_id: ExternalId }).openapi("ExternalIdAttachResponse");
const ListResponse = z.object({ success: z.literal(true), external_ids: z.array(ExternalId) }).openapi("ExternalIdsListResponse");
const DeleteResponse = z.object({ success: z.literal(true) }).openapi("ExternalIdDeleteResponse");

export function externalIdRoutes<Id extends string | number = number>(app: OpenAPIHono<AppEnv>, opts: ExternalIdRouteOptions<Id>) {
  const idSchema = (opts.idSchema ?? IdParam(opts.idParam)) as z.ZodType<Id>;
  const params = z.object({ [opts.idParam]: idSchema });
  const path = `${opts.basePath}/{${opts.idParam}}/external-ids`;
  const common = { tags: [opts.tag, "external ids"], errors: [404] };

  const entityId = async (c: { var: Pick<AppEnv["Variables"], "deps" | "auth"> }, raw: Record<string, unknown>) => {
    const id = raw[opts.idParam] as Id;
    const db = c.var.deps.db;
    const ws = c.var.auth.workspaceId;
    if (!(await opts.exists(db, ws, id))) throw ApiError.notFound(opts.label);
    return { db, ws, id };
  };

  const attach = defineRoute({
    ...common,
    middleware: opts.writeMiddleware ?? [],
    method: "post",
    path,
    scope: `${opts.area}:write`,
    summary: `Attach an external ID to a ${opts.label}`,
    description: "The same mapping on the same entity again succeeds and changes nothing; a mapping already on another entity of this type is a 409.",
    errors: [404, 409],
    request: { params, body: { required: true, content: { "application/json": { schema: ExternalId } } } },
    responses: { 201: { description: "Attached", content: { "application/json": { schema: AttachResponse } } } },
  });
  app.openapi(attach, async (c) => {
    const { db, ws, id } = await entityId(c, c.req.valid("param") as Record<string, unknown>);
    const body = c.req.valid("json");
    const pair = await attachExternalId(db, ws, opts.entityType, id, { source: body.source, external_id: body.external_id });
    return c.json({ success: true as const, external_id: pair }, 201);
  });

  const list = defineRoute({
    ...common,
    method: "get",
    path,
    scope: `${opts.area}:read`,
    summary: `List the external IDs of a ${opts.label}`,
    request: { params },
    responses: { 200: { description: "The mappings, oldest first", content: { "application/json": { schema: ListResponse } } } },
  });
  app.openapi(list, async (c) => {
    const { db, ws, id } = await entityId(c, c.req.valid("param") as Record<string, unknown>);
    return c.json({ success: true as const, external_ids: await listExternalIds(db, ws, opts.entityType, id) }, 200);
  });

  const detach = defineRoute({
    ...common,
    middleware: opts.writeMiddleware ?? [],
    method: "delete",
    path: `${path}/{source}/{external_id}`,
    scope: `${opts.area}:write`,
    summary: `Detach an external ID from a ${opts.label}`,
    description: "URL-encode reserved characters of source and external_id. A mapping this entity does not carry is a 404.",
    request: {
      params: params.extend({
        source: ExternalIdSource.openapi({ param: { name: "source", in: "path" } }),
        external_id: ExternalIdValue.openapi({ param: { name: "external_id", in: "path" } }),
      }),
    },
    responses: { 200: { description: "Detached", content: { "application/json": { schema: DeleteResponse } } } },
  });
  app.openapi(detach, async (c) => {
    const p = c.req.valid("param") as Record<string, unknown> & { source: string; external_id: string };
    const { db, ws, id } = await entityId(c, p);
    if (!(await detachExternalId(db, ws, opts.entityType, id, { source: p.source, external_id: p.external_id }))) {
      throw ApiError.notFound("external ID on this entity");
    }
    return c.json({ success: true as const }, 200);
  });
}
