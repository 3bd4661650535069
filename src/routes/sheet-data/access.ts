// The sheet a sheet-data route names: its table and sheet checked to be the caller's and live, and
// the stub of the object that owns it, with the access the object checks again.
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { liveSheet } from "../../services/tables";

export function sheetOf(c: Context<AppEnv>, p: { table_id: string; sheet_id: string }) {
  return liveSheet(c.var.deps, c.get("auth").workspaceId, p.table_id, p.sheet_id);
}
