// One SQLite-backed Durable Object per smart-table sheet: the single writer of that sheet's
// columns, rows, cells and versions, so edits are serialized without D1 transactions.
// The foundation gives it its storage schema and its version counter; the sheet engine grows it.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export class SheetObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS sheet_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`);
    this.sql.exec(`INSERT OR IGNORE INTO sheet_meta (key, value) VALUES ('version', 0)`);
  }

  /** The sheet's current version: 0 for a new sheet, +1 on every committed mutation. */
  version(): number {
    return this.sql.exec<{ value: number }>(`SELECT value FROM sheet_meta WHERE key = 'version'`).one().value;
  }

  /** Bumps and returns the version; runs inside the object's single-threaded input gate. */
  protected bumpVersion(): number {
    return this.sql.exec<{ value: number }>(`UPDATE sheet_meta SET value = value + 1 WHERE key = 'version' RETURNING value`).one().value;
  }
}
