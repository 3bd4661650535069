// What another feature adds to indexing (Signals: matching new logs against its hooks), declared apart
// so the index (indexing.ts) and the workspace's log store (periods.ts, which carries the request's
// extension to the indexing a snapshot does) both name it without importing each other.
import type { Statement } from "../db/batch";
import type { Db } from "../db/client";

/** A log of an index batch as an extension sees it: its id, workspace, the revision read, and its prompt. */
export interface IndexedLog {
  id: number;
  workspaceId: number;
  revision: number;
  promptId: number | null;
}

/**
 * Work done where logs become searchable: statements run inside each index batch's transaction, before
 * the watermark moves, so they commit with the logs' index rows or not at all; `indexedTo` is the
 * watermark the batch read (its statements write only while it is still there, as the batch's own do);
 * `committed` hears their results once the batch committed. Its statements must be safe to run again (a
 * batch that raced is read and run again).
 */
export interface IndexExtension {
  batch(logs: Db, batch: readonly IndexedLog[], indexedTo: number): Promise<{ statements: Statement[]; committed(results: readonly D1Result[]): Promise<void> } | null>;
}
