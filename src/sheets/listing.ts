// What a sheet object writes back to D1, in one place: the listing fields of its `sheets` row and the
// prompts its columns use (`sheet_prompt_refs`). The object is the writer of both; D1 keeps them so
// lists and lookups across a workspace need no object.
import { and, eq, lt } from "drizzle-orm";
import { runBatch } from "../db/batch";
import type { Db } from "../db/client";
import { sheetPromptRefs, sheets } from "../db/schema";
import type { PromptRef } from "./prompt-refs";
import type { SheetIdentity } from "./types";

/**
 * Copies row_count and version_count to the D1 sheet row. Guarded by the version so a late copy
 * never overwrites a newer one. A failure is logged, not thrown: the change is committed in the
 * object, and the next change (or the import's end) copies again.
 */
export async function syncListing(db: Db, sheetId: string, counts: { rowCount: number; version: number }): Promise<void> {
  try {
    await db
      .update(sheets)
      .set({ rowCount: counts.rowCount, versionCount: counts.version, updatedAt: Date.now() })
      .where(and(eq(sheets.id, sheetId), lt(sheets.versionCount, counts.version)));
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "sheet listing sync failed", sheet_id: sheetId, error: String(err) }));
  }
}

/** Replaces columns' rows in sheet_prompt_refs (after any change of their type or config), atomically, in one batch. */
export async function replacePromptRefs(db: Db, ident: SheetIdentity, columns: readonly { columnId: string; refs: readonly PromptRef[] }[]): Promise<void> {
  await runBatch(
    db,
    columns.flatMap(({ columnId, refs }) => [
      db.delete(sheetPromptRefs).where(and(eq(sheetPromptRefs.sheetId, ident.sheetId), eq(sheetPromptRefs.columnId, columnId))),
      ...refs.map((r) =>
        db.insert(sheetPromptRefs).values({
          workspaceId: ident.workspaceId,
          tableId: ident.tableId,
          sheetId: ident.sheetId,
          columnId,
          promptId: r.promptId,
          promptVersionId: r.promptVersionId,
          promptLabelId: r.promptLabelId,
        }),
      ),
    ]),
  );
}
