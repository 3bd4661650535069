// The sheet engine seen from the Worker: finds a workspace's sheet in D1 (another workspace's sheet is
// a 404) and turns the sheet object's tagged results into ApiErrors. The work itself runs in the object.
import type { Deps } from "../../env";
import { ApiError } from "../../lib/errors";
import type { Fail, SheetAccess } from "../../sheets";
import { requireSheet } from "./sheets";

/**
 * Sheets found live in D1 lately, per isolate: a cell edit is the hot path, and this spares it one
 * D1 read. Safe because the object itself refuses a deleted sheet (sheet and table deletion mark it)
 * and any other workspace or table; the cache only keeps unknown ids from ever reaching an object.
 */
const LIVE_TTL_MS = 5_000;
const LIVE_MAX = 10_000;
const live = new Map<string, number>();

/** The sheet's object and the access it checks, once the sheet is known to be a live sheet of this workspace's table. */
export async function liveSheet(deps: Pick<Deps, "db" | "sheet">, workspaceId: number, tableId: string, sheetId: string) {
  const key = `${workspaceId}:${tableId}:${sheetId}`;
  const now = Date.now();
  if ((live.get(key) ?? 0) <= now) {
    await requireSheet(deps.db, workspaceId, tableId, sheetId);
    if (live.size >= LIVE_MAX) live.clear();
    live.set(key, now + LIVE_TTL_MS);
  }
  const access: SheetAccess = { workspaceId, tableId };
  return { stub: deps.sheet(sheetId), access };
}

type Okay<R> = Omit<Extract<R, { ok: true }>, "ok" | typeof Symbol.dispose>;

/** The object's answer without its `ok` tag, or the ApiError it names. */
export function unwrap<R extends { ok: boolean }>(r: R): Okay<R> {
  if (!r.ok) {
    const f = r as unknown as Fail;
    throw new ApiError(f.code, f.message);
  }
  const { ok: _ok, ...rest } = r as unknown as Record<string, unknown>;
  return rest as Okay<R>;
}
