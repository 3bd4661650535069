// The sheet engine seen from the Worker: finds a workspace's sheet in D1 (another workspace's sheet is
// a 404) and turns the sheet object's tagged results into ApiErrors. The work itself runs in the object.
import type { Db } from "../db/client";
import type { Env } from "../env";
import { ApiError } from "../lib/errors";
import type { Fail } from "../sheets/sheet-object";
import { requireSheet, sheetStub } from "./sheets";

/** The sheet's object, once the sheet is known to be a live sheet of this workspace's table. */
export async function liveSheet(db: Db, env: Env, workspaceId: number, tableId: string, sheetId: string) {
  await requireSheet(db, workspaceId, tableId, sheetId);
  return sheetStub(env, sheetId);
}

/** The object's answer without its `ok` tag, or the ApiError it names. */
type Okay<R> = Omit<Extract<R, { ok: true }>, "ok" | typeof Symbol.dispose>;

export function unwrap<R extends { ok: boolean }>(r: R): Okay<R> {
  if (!r.ok) {
    const f = r as unknown as Fail;
    throw new ApiError(f.code, f.message);
  }
  const { ok: _ok, ...rest } = r as unknown as Record<string, unknown>;
  return rest as Okay<R>;
}
