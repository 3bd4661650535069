// The log archive: the job moves exactly the logs past a workspace's window to R2, day by day and
// within its file bounds; GET by id and the export read both tiers, each log exactly once, across a
// crash between the R2 write and the D1 batch and while the job runs; another workspace sees nothing.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import {
  archiveCutoff,
  archiveKey,
  archiveNextFile,
  archiveOldLogs,
  commitArchiveFile,
  exportLogs,
  pickArchiveBatch,
  uploadArchiveFile,
  type ArchiveSettings,
} from "../../src/logs/archive";
import { call, createWorkspace as createAnyWorkspace, json, logInControlDb, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { WorkspaceLogs } from "../../src/logs/periods";
import { exportFilter, exportMatchingLogs } from "../../src/logs";
import { indexNow } from "../helpers/logs";

const db = getDb(env.DB);
/**
 * These tests drive the job's steps on one database: their workspaces log into the control database
 * (as workspaces from before log databases do). test/logs/two-tiers.test.ts runs the job on log databases.
 */
async function createWorkspace(): Promise<TestKey> {
  const ws = await createAnyWorkspace();
  await logInControlDb(ws);
  return ws;
}
// Noon, 10 June 2024; a 30-day window archives the days up to 10 May (cutoff: 11 May 00:00).
const NOW = Date.UTC(2024, 5, 10, 12);
const CUTOFF = Date.UTC(2024, 4, 11);
const at = (month: number, day: number, h = 0, m = 0, s = 0, ms = 0) => Date.UTC(2024, month - 1, day, h, m, s, ms);
const SMALL: ArchiveSettings = { fileMaxLogs: 3, fileMaxBytes: 1_000_000, runMaxFiles: 1000 };

async function logAt(ws: TestKey, start: number, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await call("/log-request", {
    method: "POST",
    key: ws.key,
    json: logBody({ request_start_time: new Date(start).toISOString(), request_end_time: new Date(start + 1500).toISOString(), tags: ["t1", `at-${start}`], metadata: { user: "u1" }, ...extra }),
  });
  expect(res.status).toBe(201);
  // Indexed, as any log is within seconds: the job leaves a log the indexer has yet to see.
  await indexNow();
  return (await json(res)).id;
}

const getLog = async (ws: TestKey, id: number) => {
  const res = await call(`/api/public/v2/requests/${id}`, { key: ws.key });
  return { status: res.status, body: await json(res) };
};

async function retention(ws: TestKey, days: number | null) {
  const res = await call("/api/public/v2/workspace/log-retention", { method: "PUT", key: ws.key, json: { days } });
  expect(res.status).toBe(200);
}

async function exported(ws: TestKey, from: number, to: number): Promise<any[]> {
  const res = await call(`/api/public/v2/requests/export?from=${from}&to=${to}`, { key: ws.key });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
  const text = new TextDecoder().decode(await res.arrayBuffer());
  return text === "" ? [] : text.trimEnd().split("\n").map((l) => JSON.parse(l));
}

const liveIds = async (ws: TestKey) =>
  (await env.DB.prepare("SELECT id FROM request_logs WHERE workspace_id = ? ORDER BY id").bind(ws.workspaceId).all<{ id: number }>()).results.map((r) => r.id);

const manifest = async (ws: TestKey) =>
  (
    await env.DB.prepare("SELECT day, object_key, first_id, last_id, log_count, bytes FROM request_log_archives WHERE workspace_id = ? ORDER BY day, first_id")
      .bind(ws.workspaceId)
      .all<{ day: number; object_key: string; first_id: number; last_id: number; log_count: number; bytes: number }>()
  ).results;

const objects = async (ws: TestKey) => (await env.BLOBS.list({ prefix: `log-archive/${ws.workspaceId}/` })).objects.map((o) => o.key).sort();

/** The test's bucket, running `then` once right after the first put (what lands between a file's R2 write and its batch). */
function afterFirstPut(then: () => Promise<void>): R2Bucket {
  let pending = true;
  return {
    put: async (...args: Parameters<R2Bucket["put"]>) => {
      const put = await env.BLOBS.put(...args);
      if (pending) {
        pending = false;
        await then();
      }
      return put;
    },
    delete: (key: string) => env.BLOBS.delete(key),
  } as unknown as R2Bucket;
}

const archiveAll = (settings = SMALL, now = NOW) => archiveOldLogs(db, async (ws) => WorkspaceLogs.single(ws, db), env.BLOBS, settings, now);

/** Each id once, and every log deep-equal to what GET answered before it was archived. */
function expectExactly(lines: any[], before: Map<number, unknown>, ids: number[]) {
  expect(lines.map((l) => l.request_id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  for (const l of lines) expect(l).toEqual(before.get(l.request_id));
}

describe("the archive job", () => {
  it("moves exactly the logs of whole days past the window, a file per day and at most fileMaxLogs logs each", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    await retention(ws, 30);
    expect(archiveCutoff(NOW, 30)).toBe(CUTOFF);
    const may8 = [await logAt(ws, at(5, 8, 1)), await logAt(ws, at(5, 8, 2)), await logAt(ws, at(5, 8, 3)), await logAt(ws, at(5, 8, 4))];
    const may9 = [await logAt(ws, at(5, 9, 5)), await logAt(ws, at(5, 9, 6)), await logAt(ws, at(5, 9, 7))];
    // The last instant before the cutoff goes; the cutoff itself, and the rest of its day (older than
    // the window by the clock, but its day is not whole yet), stay.
    const lastBefore = await logAt(ws, CUTOFF - 1);
    const keep = [await logAt(ws, CUTOFF), await logAt(ws, at(5, 11, 11)), await logAt(ws, at(6, 1))];
    // A workspace without a window keeps even its oldest logs.
    const otherOld = await logAt(other, at(1, 1));
    const archived = [...may8, ...may9, lastBefore];
    const before = new Map<number, unknown>();
    for (const id of [...archived, ...keep]) before.set(id, (await getLog(ws, id)).body);

    // Within its budget: one file a run.
    const one = await archiveAll({ ...SMALL, runMaxFiles: 1 });
    expect(one.files).toBe(1);
    expect((await manifest(ws)).map((m) => m.log_count)).toEqual([3]);

    await archiveAll();
    const files = await manifest(ws);
    // 8 May: 4 logs over a full file and one more; 9 May: exactly 3 logs, one file; 10 May: one log.
    expect(files.map((f) => [new Date(f.day).toISOString().slice(0, 10), f.log_count, f.first_id, f.last_id])).toEqual([
      ["2024-05-08", 3, may8[0], may8[2]],
      ["2024-05-08", 1, may8[3], may8[3]],
      ["2024-05-09", 3, may9[0], may9[2]],
      ["2024-05-10", 1, lastBefore, lastBefore],
    ]);
    expect(files.map((f) => f.object_key)).toEqual([
      archiveKey(ws.workspaceId, at(5, 8), may8[0], may8[2]),
      archiveKey(ws.workspaceId, at(5, 8), may8[3], may8[3]),
      archiveKey(ws.workspaceId, at(5, 9), may9[0], may9[2]),
      archiveKey(ws.workspaceId, at(5, 10), lastBefore, lastBefore),
    ]);
    expect(files[0].object_key).toBe(`log-archive/${ws.workspaceId}/2024-05-08/${may8[0]}-${may8[2]}-r0.ndjson.gz`);
    expect(await objects(ws)).toEqual(files.map((f) => f.object_key).sort());
    for (const f of files) expect((await env.BLOBS.head(f.object_key))!.size).toBe(f.bytes);
    expect(await liveIds(ws)).toEqual(keep);
    expect(await liveIds(other)).toEqual([otherOld]);

    // The search entries went with the logs (and the index stays whole); the daily totals stay.
    const ids = JSON.stringify(archived);
    const fts = await env.DB.prepare("SELECT count(*) AS n FROM request_log_search WHERE rowid IN (SELECT value FROM json_each(?))").bind(ids).first<{ n: number }>();
    expect(fts!.n).toBe(0);
    await env.DB.prepare("INSERT INTO request_log_search (request_log_search) VALUES ('integrity-check')").run();
    const daily = await env.DB.prepare("SELECT sum(requests) AS n FROM request_log_daily WHERE workspace_id = ? AND dim = 'all'").bind(ws.workspaceId).first<{ n: number }>();
    expect(daily!.n).toBe(archived.length + keep.length);

    // Read back: the same answer as before, from the archive.
    for (const id of [...archived, ...keep]) expect(await getLog(ws, id)).toEqual({ status: 200, body: before.get(id) });
    // Another workspace's archived log is a 404, and its export holds nothing of this one.
    expect((await getLog(other, may8[0])).status).toBe(404);
    expect((await exported(other, at(1, 1), at(7, 1))).map((l) => l.request_id)).toEqual([otherOld]);

    // The export: each log once across both tiers, archives first; [from, to) at both ends.
    const all = await exported(ws, at(5, 1), at(7, 1));
    expectExactly(all, before, [...archived, ...keep]);
    expect(all.map((l) => l.request_id)).toEqual([...archived, ...keep]);
    expectExactly(await exported(ws, at(5, 9), CUTOFF), before, [...may9, lastBefore]);
    expectExactly(await exported(ws, at(5, 9), CUTOFF + 1), before, [...may9, lastBefore, keep[0]]);
    // A bound inside an archived day reads only that part of its files.
    expectExactly(await exported(ws, at(5, 8, 2), at(5, 9, 6)), before, [may8[1], may8[2], may8[3], may9[0]]);
    expectExactly(await exported(ws, at(5, 8, 2) + 1, at(5, 9, 6) + 1), before, [may8[2], may8[3], may9[0], may9[1]]);
    expect(await exported(ws, at(4, 1), at(5, 1))).toEqual([]);

    // Nothing left past the window: another run writes nothing for this workspace.
    await archiveAll();
    expect((await manifest(ws)).length).toBe(4);
  });

  it("bounds a file by its NDJSON bytes, on both sides of the limit", async () => {
    const sizes = async (ws: TestKey, ids: number[]) => Promise.all(ids.map(async (id) => new TextEncoder().encode(`${JSON.stringify((await getLog(ws, id)).body)}\n`).byteLength));
    for (const [slack, counts] of [
      [0, [2, 1]],
      [-1, [1, 1, 1]],
    ] as const) {
      const ws = await createWorkspace();
      const ids = [await logAt(ws, at(3, 3, 1)), await logAt(ws, at(3, 3, 2)), await logAt(ws, at(3, 3, 3))];
      const [a, b] = await sizes(ws, ids);
      const settings = { ...SMALL, fileMaxBytes: a + b + slack };
      while (await archiveNextFile(db, env.BLOBS, ws.workspaceId, CUTOFF, settings));
      expect((await manifest(ws)).map((m) => m.log_count)).toEqual(counts);
      expect(await liveIds(ws)).toEqual([]);
    }
  });

  it("a crash between the R2 write and the D1 batch loses nothing and duplicates nothing when the job runs again", async () => {
    const ws = await createWorkspace();
    await retention(ws, 30);
    const ids = [await logAt(ws, at(4, 2, 1)), await logAt(ws, at(4, 2, 2)), await logAt(ws, at(4, 2, 3))];
    const before = new Map<number, unknown>();
    for (const id of ids) before.set(id, (await getLog(ws, id)).body);

    // Steps 1 and 2, then the worker dies before the batch.
    const batch = (await pickArchiveBatch(db, ws.workspaceId, CUTOFF, SMALL))!;
    const orphan = (await uploadArchiveFile(db, env.BLOBS, ws.workspaceId, batch, SMALL))!;
    expect(await objects(ws)).toEqual([orphan.key]);
    // The object without a manifest row is never read: the logs are still answered from D1, once each.
    expect(await manifest(ws)).toEqual([]);
    expect(await liveIds(ws)).toEqual(ids);
    expectExactly(await exported(ws, at(4, 1), at(5, 1)), before, ids);

    // Redelivery: the same logs, the same key, overwritten; then the batch.
    await archiveAll();
    expect(await objects(ws)).toEqual([orphan.key]);
    expect((await manifest(ws)).map((m) => [m.object_key, m.log_count])).toEqual([[orphan.key, 3]]);
    expect(await liveIds(ws)).toEqual([]);
    for (const id of ids) expect(await getLog(ws, id)).toEqual({ status: 200, body: before.get(id) });
    expectExactly(await exported(ws, at(4, 1), at(5, 1)), before, ids);
  });

  it("a crash, then a late log of the same day: the retry writes another key, and the orphan stays unread", async () => {
    const ws = await createWorkspace();
    await retention(ws, 30);
    const ids = [await logAt(ws, at(4, 3, 1)), await logAt(ws, at(4, 3, 2))];
    const batch = (await pickArchiveBatch(db, ws.workspaceId, CUTOFF, SMALL))!;
    const orphan = (await uploadArchiveFile(db, env.BLOBS, ws.workspaceId, batch, SMALL))!;
    ids.push(await logAt(ws, at(4, 3, 0, 30)));
    const before = new Map<number, unknown>();
    for (const id of ids) before.set(id, (await getLog(ws, id)).body);

    await archiveAll();
    const files = await manifest(ws);
    expect(files.map((f) => [f.first_id, f.last_id, f.log_count])).toEqual([[ids[0], ids[2], 3]]);
    expect(await objects(ws)).toEqual([orphan.key, files[0].object_key].sort());
    for (const id of ids) expect(await getLog(ws, id)).toEqual({ status: 200, body: before.get(id) });
    expectExactly(await exported(ws, at(4, 1), at(5, 1)), before, ids);
  });

  it("an update between the R2 write and the D1 batch stops the batch; the next run archives the log with the update", async () => {
    const ws = await createWorkspace();
    await retention(ws, 30);
    const ids = [await logAt(ws, at(4, 5, 1)), await logAt(ws, at(4, 5, 2))];
    const batch = (await pickArchiveBatch(db, ws.workspaceId, CUTOFF, SMALL))!;
    const stale = (await uploadArchiveFile(db, env.BLOBS, ws.workspaceId, batch, SMALL))!;
    expect(stale.revisions).toEqual([0, 0]);
    // Accepted after the copy was taken: the copy must not replace the log.
    const tracked = await call("/library-track-score", { method: "POST", key: ws.key, json: { request_id: ids[1], score: 77 } });
    expect(tracked.status).toBe(200);
    const updated = (await getLog(ws, ids[1])).body;
    expect(updated.score).toBe(77);

    expect(await commitArchiveFile(db, stale)).toBe(false);
    expect(await manifest(ws)).toEqual([]);
    expect(await liveIds(ws)).toEqual(ids);

    // The next run copies the logs as they are now, under another key, and commits them.
    await archiveAll();
    const files = await manifest(ws);
    expect(files.map((f) => [f.first_id, f.last_id, f.log_count])).toEqual([[ids[0], ids[1], 2]]);
    expect(files[0].object_key).not.toBe(stale.key);
    expect(files[0].object_key).toBe(archiveKey(ws.workspaceId, at(4, 5), ids[0], ids[1], 1));
    expect(await liveIds(ws)).toEqual([]);
    expect(await getLog(ws, ids[1])).toEqual({ status: 200, body: updated });
    expect((await exported(ws, at(4, 1), at(5, 1))).find((l) => l.request_id === ids[1])).toEqual(updated);
  });

  it("the job drops its own copy when an update stops its batch, and keeps a copy another run committed", async () => {
    const ws = await createWorkspace();
    const ids = [await logAt(ws, at(4, 7, 1)), await logAt(ws, at(4, 7, 2))];
    // An update lands right after the job's R2 write, before its batch.
    const racing = afterFirstPut(async () => {
      expect((await call("/library-track-score", { method: "POST", key: ws.key, json: { request_id: ids[0], score: 55 } })).status).toBe(200);
    });
    const stale = (await archiveNextFile(db, racing, ws.workspaceId, CUTOFF, SMALL))!;
    expect(stale.revisions).toEqual([0, 0]);
    expect(stale.committed).toBe(false);
    expect(await manifest(ws)).toEqual([]);
    expect(await objects(ws)).toEqual([]);
    expect(await liveIds(ws)).toEqual(ids);
    expect((await getLog(ws, ids[0])).body.score).toBe(55);

    // The next run commits the logs as they are now.
    const file = (await archiveNextFile(db, racing, ws.workspaceId, CUTOFF, SMALL))!;
    expect(file.committed).toBe(true);
    expect(await objects(ws)).toEqual([file.key]);
    expect((await manifest(ws)).map((m) => m.object_key)).toEqual([file.key]);
    expect((await getLog(ws, ids[0])).body.score).toBe(55);

    // Two runs copy the same logs; the other one commits first. This run's batch then writes nothing,
    // and the object, which the other run's manifest row names, stays.
    const more = [await logAt(ws, at(4, 8, 1))];
    const overlapping = afterFirstPut(async () => {
      expect((await archiveNextFile(db, env.BLOBS, ws.workspaceId, CUTOFF, SMALL))!.committed).toBe(true);
    });
    const same = (await archiveNextFile(db, overlapping, ws.workspaceId, CUTOFF, SMALL))!;
    expect(same.ids).toEqual(more);
    expect(same.committed).toBe(false);
    expect((await manifest(ws)).map((m) => m.object_key)).toEqual([file.key, same.key]);
    expect(await objects(ws)).toEqual([file.key, same.key].sort());
    expect((await getLog(ws, more[0])).status).toBe(200);
  });

  it("every update of a log moves its revision on, whichever column it changes", async () => {
    const ws = await createWorkspace();
    const id = await logAt(ws, at(4, 6, 1));
    const revision = async () => (await env.DB.prepare("SELECT revision FROM request_logs WHERE id = ?").bind(id).first<{ revision: number }>())!.revision;
    expect(await revision()).toBe(0);
    await env.DB.prepare("UPDATE request_logs SET score = 5 WHERE id = ?").bind(id).run();
    expect(await revision()).toBe(1);
    await env.DB.prepare("UPDATE request_logs SET metadata = '{\"a\":\"b\"}', group_id = NULL WHERE id = ?").bind(id).run();
    expect(await revision()).toBe(2);
  });

  it("a log both in a manifest's file and still in D1 is read once, from the file", async () => {
    const ws = await createWorkspace();
    const ids = [await logAt(ws, at(4, 4, 1)), await logAt(ws, at(4, 4, 2))];
    const live = await logAt(ws, at(4, 4, 3));
    const before = new Map<number, unknown>();
    for (const id of [...ids, live]) before.set(id, (await getLog(ws, id)).body);
    const file = (await uploadArchiveFile(db, env.BLOBS, ws.workspaceId, { day: at(4, 4), ids }, SMALL))!;
    // The manifest row without the delete: the state the export must still read once.
    await env.DB.prepare("INSERT INTO request_log_archives (workspace_id, day, object_key, first_id, last_id, log_count, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .bind(ws.workspaceId, file.day, file.key, ids[0], ids[1], 2, file.bytes)
      .run();
    expectExactly(await exported(ws, at(4, 1), at(5, 1)), before, [...ids, live]);
    for (const id of [...ids, live]) expect(await getLog(ws, id)).toEqual({ status: 200, body: before.get(id) });
  });

  it("an export while the job moves logs shows each log exactly once", async () => {
    for (const perPage of [1, "all"] as const) {
      const ws = await createWorkspace();
      const ids: number[] = [];
      // Three past days and one live day, logged out of order so ids and days interleave.
      for (const h of [1, 2, 3]) for (const d of [9, 7, 8, 20]) ids.push(await logAt(ws, at(4, d, h)));
      const before = new Map<number, unknown>();
      for (const id of ids) before.set(id, (await getLog(ws, id)).body);
      const cutoff = at(4, 10);
      const settings = { ...SMALL, fileMaxLogs: 2 };
      const step = async () => {
        if (perPage === 1) await archiveNextFile(db, env.BLOBS, ws.workspaceId, cutoff, settings);
        else while (await archiveNextFile(db, env.BLOBS, ws.workspaceId, cutoff, settings));
      };
      const lines: any[] = [];
      for await (const line of exportLogs(WorkspaceLogs.single(ws.workspaceId, db), env.BLOBS, ws.workspaceId, at(4, 1), at(5, 1), { pageSize: 2, onPage: step })) lines.push(JSON.parse(line));
      expectExactly(lines, before, ids);
      // Every past log was moved meanwhile, and the export once more reads them all once.
      while (await archiveNextFile(db, env.BLOBS, ws.workspaceId, cutoff, settings));
      expect((await liveIds(ws)).length).toBe(3);
      expectExactly(await exported(ws, at(4, 1), at(5, 1)), before, ids);
    }
  });
});

describe("the export through a filter (POST /api/public/v2/requests/export) and the archive", () => {
  it("a log the job moves between a page's ids and its rows is read from its file, once; logs archived before are outside the filter, as in search", async () => {
    const ws = await createWorkspace();
    const ids: number[] = [];
    for (const d of [5, 6]) for (const h of [1, 2]) ids.push(await logAt(ws, at(4, d, h), { tags: ["wanted"] }));
    const other = await logAt(ws, at(4, 5, 3), { tags: ["other"] });
    const live = await logAt(ws, at(6, 9, 1), { tags: ["wanted"] });
    const before = new Map<number, unknown>();
    for (const id of [...ids, live]) before.set(id, (await getLog(ws, id)).body);
    const filter_group = { logic: "AND" as const, filters: [{ field: "tags" as const, operator: "contains" as const, value: "wanted" }] };
    const logs = WorkspaceLogs.single(ws.workspaceId, db);
    const filter = await exportFilter(logs, ws.workspaceId, { filter_group });
    // Every page's logs are selected, then the job moves every past log before their rows are read.
    let runs = 0;
    const lines: any[] = [];
    const moveAll = async () => {
      runs++;
      while (await archiveNextFile(db, env.BLOBS, ws.workspaceId, CUTOFF, SMALL));
    };
    for await (const line of await exportMatchingLogs(logs, env.BLOBS, ws.workspaceId, filter, { beforeRows: moveAll })) lines.push(JSON.parse(line));
    expect(runs).toBe(1);
    expect((await liveIds(ws))).toEqual([live]);
    expectExactly(lines, before, [...ids, live]);
    expect(lines.map((l) => l.request_id)).toEqual([...ids, live]);
    // Once archived, the filter no longer reaches them (as search does not); the GET export reads both tiers.
    const res = await call("/api/public/v2/requests/export", { method: "POST", key: ws.key, json: { filter_group } });
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(await res.arrayBuffer()).trimEnd().split("\n").map((l) => JSON.parse(l).request_id)).toEqual([live]);
    expectExactly(await exported(ws, at(4, 1), at(7, 1)), new Map([...before, [other, (await getLog(ws, other)).body]]), [...ids, other, live]);
  });
});

describe("GET /api/public/v2/requests/export", () => {
  it("refuses bad bounds with a 400 and needs a key", async () => {
    const ws = await createWorkspace();
    for (const q of ["", "?from=2024-01-01", "?to=2024-01-01", "?from=2024-01-02&to=2024-01-01", "?from=2024-01-01&to=2024-01-01", "?from=soon&to=2024-01-01", "?from=2024-01-01&to=99999-01-01"]) {
      const res = await call(`/api/public/v2/requests/export${q}`, { key: ws.key });
      expect(res.status, q).toBe(400);
      expect((await json(res)).error).toBe("validation_error");
    }
    expect((await call("/api/public/v2/requests/export?from=0&to=1")).status).toBe(401);
    // Epoch milliseconds and ISO mean the same instant; one millisecond is a range.
    const id = await logAt(ws, at(2, 2));
    expect((await exported(ws, at(2, 2), at(2, 2) + 1)).map((l) => l.request_id)).toEqual([id]);
    expect((await exported(ws, at(2, 2) - 1, at(2, 2))).map((l) => l.request_id)).toEqual([]);
    const iso = await call(`/api/public/v2/requests/export?from=2024-02-02T00:00:00Z&to=2024-02-02T00:00:00.001Z`, { key: ws.key });
    expect(new TextDecoder().decode(await iso.arrayBuffer()).trimEnd().split("\n").map((l) => JSON.parse(l).request_id)).toEqual([id]);
  });
});
