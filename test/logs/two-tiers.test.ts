// Issue 19's proof: with a tiny shard size one workspace lands on the second log database, and with a
// 30-day window its old logs move to R2 (through a crash between the R2 write and the D1 batch, then
// redelivery). Every reader then sees exactly the logs it saw before, each once: GET by id and the
// export across both tiers, analytics totals and suggestions from the kept totals; search, dataset
// fills, add-request-log and sheet imports, which read the live tier only (docs/archive.md), see
// exactly the live logs. The other workspace, on the other shard, sees nothing change.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { archiveCutoff, archiveNextFile, archiveOldLogs, pickArchiveBatch, uploadArchiveFile, type ArchiveSettings } from "../../src/logs/archive";
import { placeWorkspace } from "../../src/logs/shards";
import { call, createWorkspace, json, logsDb, logsDbOf, logsOf, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody, text } from "../helpers/fixtures";
import { shardOf, sizeOf } from "../helpers/log-databases";
import { analytics, createGroup, datasetPost, expectExactly, exportedBetween, filledIds, getLog, importedIds, searchAll, snapshotById, sorted, suggest } from "../helpers/log-reads";
import { indexNow } from "../helpers/logs";

// Noon, 10 June 2024; a 30-day window archives the days up to 10 May (cutoff: 11 May 00:00).
const NOW = Date.UTC(2024, 5, 10, 12);
const CUTOFF = Date.UTC(2024, 4, 11);
const RANGE = { from: Date.UTC(2024, 2, 1), to: Date.UTC(2024, 6, 1) };
const at = (month: number, day: number, h = 0, m = 0, s = 0, ms = 0) => Date.UTC(2024, month - 1, day, h, m, s, ms);
// Two logs a file, so a day of four logs makes two files.
const SMALL: ArchiveSettings = { fileMaxLogs: 2, fileMaxBytes: 1_000_000, runMaxFiles: 1000 };

interface Spec {
  start: number;
  body: Record<string, unknown>;
}
// Logged in this order: ids interleave old and recent days, and one old day gets a late log.
const SPECS: Spec[] = [
  { start: at(5, 1, 9), body: { model: "gpt-4o", provider: "openai", tags: ["prod", "eu"], metadata: { user_id: "u1", env: "prod" }, prompt_input_variables: { topic: "cats", n: 3 }, prompt_id: 11, prompt_version_number: 2, prompt_name: "support", price: 0.5, input_tokens: 10, output_tokens: 20 } },
  { start: at(5, 1, 10), body: { model: "claude-3", provider: "anthropic", tags: ["staging"], metadata: { user_id: "u2" }, prompt_input_variables: { topic: "dogs" }, status: "WARNING", error_type: "VARIABLE_MISSING_OR_EMPTY", price: 0.01 } },
  { start: at(5, 1, 11), body: { model: "gpt-4o-mini", provider: "openai", status: "ERROR", error_type: "PROVIDER_ERROR", prompt_id: 12, prompt_name: "router" } },
  { start: at(6, 5, 7), body: { model: "gpt-4o", provider: "openai", tags: ["prod"], metadata: { env: "dev" }, prompt_input_variables: { topic: "birds" }, price: 1.25, input_tokens: 50, output_tokens: 60 } },
  { start: at(5, 5, 14), body: { model: "gpt-4o", provider: "openai", tags: ["archive-only"], metadata: { only_old: "yes" }, prompt_input_variables: { old_var: 1 } } },
  { start: CUTOFF - 1, body: { model: "claude-3", provider: "anthropic", tags: ["edge"], metadata: { user_id: "u1" } } },
  { start: CUTOFF, body: { model: "claude-3", provider: "anthropic", tags: ["edge"], metadata: { user_id: "u2" }, prompt_id: 11, prompt_version_number: 3, prompt_name: "support" } },
  { start: at(5, 20, 16), body: { model: "claude-3", provider: "anthropic", tags: ["eu"], metadata: { user_id: "u3" }, prompt_input_variables: { topic: "cats" } } },
  { start: at(6, 10, 8), body: { model: "gpt-4o", provider: "openai", tags: ["live-only"], metadata: { only_live: "yes" }, prompt_input_variables: { live_var: "x" } } },
  { start: at(5, 1, 12), body: { model: "gpt-4o-mini", provider: "openai", tags: ["prod", "late"], metadata: { user_id: "u4" } } },
  { start: at(4, 2, 3), body: { model: "gpt-4o-mini", provider: "openai", tags: ["prod"], price: 0.2 } },
  { start: at(6, 10, 9), body: {} },
];
const isArchived = (s: Spec) => s.start < CUTOFF;

async function logAll(ws: TestKey, owner: string): Promise<number[]> {
  const ids: number[] = [];
  for (const [i, s] of SPECS.entries()) {
    const res = await call("/log-request", {
      method: "POST",
      key: ws.key,
      json: logBody({
        input: { type: "chat", messages: [{ role: "user", content: text(`question ${i} from ${owner}`) }] },
        output: { type: "chat", messages: [{ role: "assistant", content: text(`answer ${i}`) }] },
        ...s.body,
        // The owner in every log, so a log of one workspace can never pass for the other's.
        metadata: { ...((s.body.metadata as Record<string, string> | undefined) ?? {}), owner },
        request_start_time: new Date(s.start).toISOString(),
        request_end_time: new Date(s.start + 700 + i * 100).toISOString(),
      }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    ids.push((await json(res)).id);
  }
  await indexNow();
  return ids;
}


const SUGGEST: Record<string, string>[] = [
  { field: "engine" },
  { field: "provider_type" },
  { field: "prompt_id" },
  { field: "prompt" },
  { field: "tags" },
  { field: "metadata_keys" },
  { field: "metadata_values", metadata_key: "user_id" },
  { field: "status" },
  { field: "input_variable_keys" },
  { field: "input_variable_values", metadata_key: "topic" },
];
const suggestAll = async (ws: TestKey) => {
  const out: string[][] = [];
  for (const p of SUGGEST) out.push(await suggest(ws, p));
  return out;
};

const ALL_MODELS = { logic: "AND", filters: [{ field: "engine", operator: "in", value: ["gpt-4o", "gpt-4o-mini", "claude-3"] }] };
const wholeDays = { filter_group: { logic: "AND", filters: [{ field: "request_start_time", operator: "between", value: [new Date(RANGE.from).toISOString(), new Date(RANGE.to).toISOString()] }] } };
const exported = (ws: TestKey) => exportedBetween(ws, RANGE.from, RANGE.to);

describe("two shards and two tiers", () => {
  it("every reader sees exactly the logs it saw before, each once, after a second shard, an archive, a crash and redelivery", async () => {
    // 1. A is placed on its first log through the API; B on a shard map whose size limit is the size
    //    of A's log database, so A's is full and B goes to the other.
    const a = await createWorkspace();
    const b = await createWorkspace();
    const idsA = await logAll(a, "A");
    const shardA = (await shardOf(a))!;
    expect(["LOGS_0", "LOGS_1"]).toContain(shardA);
    const dbA = await logsDb(a);
    const shardB0 = shardA === "LOGS_0" ? "LOGS_1" : "LOGS_0";
    const sizeA = await sizeOf(dbA);
    // Precondition: the other database is the smaller one (A's logs grew A's), so it is still open.
    expect(await sizeOf(shardB0 === "LOGS_0" ? env.LOGS_0 : env.LOGS_1)).toBeLessThan(sizeA);
    expect(await placeWorkspace(getDb(env.DB), { ...env, LOG_SHARD_MAX_BYTES: String(sizeA) }, b.workspaceId)).toBe(shardB0);
    const closed = await env.DB.prepare("SELECT open FROM log_shards WHERE binding = ?").bind(shardA).first<{ open: number }>();
    expect(closed!.open).toBe(0);
    const idsB = await logAll(b, "B");
    expect(await shardOf(b)).toBe(shardB0);
    const dbB = await logsDb(b);
    expect(dbB).not.toBe(dbA);
    // C shares B's log database (and its manifest): only the workspace condition keeps B's archived
    // logs from C.
    const c = await createWorkspace();
    await shareLogsDb(c, b);
    const loggedC = await call("/log-request", { method: "POST", key: c.key, json: logBody({ request_start_time: new Date(at(6, 1)).toISOString(), request_end_time: new Date(at(6, 1) + 500).toISOString(), metadata: { owner: "C" } }) });
    expect(loggedC.status).toBe(201);
    const idC: number = (await json(loggedC)).id;
    await indexNow();
    const byIdC = await snapshotById(c, [idC]);
    const countOn = async (d1: D1Database, ws: TestKey) => (await d1.prepare("SELECT count(*) AS n FROM request_logs WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>())!.n;
    expect([await countOn(dbA, a), await countOn(dbA, b), await countOn(dbB, a), await countOn(dbB, b)]).toEqual([12, 0, 0, 12]);

    const archivedB = idsB.filter((_, i) => isArchived(SPECS[i]));
    const liveB = idsB.filter((_, i) => !isArchived(SPECS[i]));
    expect([archivedB.length, liveB.length]).toEqual([7, 5]);

    // 2. Every reader before archiving.
    const byIdA = await snapshotById(a, idsA);
    const byIdB = await snapshotById(b, idsB);
    for (const [i, id] of idsB.entries()) expect((byIdB.get(id) as any).metadata.owner, `B's log ${i}`).toBe("B");
    const exportA = await exported(a);
    expectExactly(await exported(b), byIdB, idsB);
    expectExactly(exportA, byIdA, idsA);
    const searchB = new Map((await searchAll(b)).map((item) => [item.id as number, item]));
    expect(sorted([...searchB.keys()])).toEqual(sorted(idsB));
    const searchA = await searchAll(a);
    expect(sorted(searchA.map((i) => i.id))).toEqual(sorted(idsA));
    const suggestB = await suggestAll(b);
    expect(suggestB[4]).toEqual(expect.arrayContaining(["prod", "eu", "staging", "archive-only", "edge", "late", "live-only"]));
    const analyticsB = await analytics(b, {});
    const analyticsDaysB = await analytics(b, wholeDays);
    const filteredB = await analytics(b, { filter_group: ALL_MODELS });
    expect([analyticsB.totalRequests, analyticsDaysB.totalRequests, filteredB.totalRequests]).toEqual([12, 12, 12]);
    const analyticsA = await analytics(a, {});
    expect(analyticsA.totalRequests).toBe(12);

    // 3. B keeps 30 days. One file goes the ordinary way (the oldest day, 2 April) ...
    const retention = await call("/api/public/v2/workspace/log-retention", { method: "PUT", key: b.key, json: { days: 30 } });
    expect(retention.status).toBe(200);
    expect(archiveCutoff(NOW, 30)).toBe(CUTOFF);
    const logsB = await logsDbOf(b);
    const first = await archiveNextFile(logsB, env.BLOBS, b.workspaceId, CUTOFF, SMALL);
    expect(first!.ids).toEqual([idsB[10]]);
    // ... then the worker dies between the R2 write of the next file (1 May, two logs) and its D1 batch.
    const batch = (await pickArchiveBatch(logsB, b.workspaceId, CUTOFF, SMALL))!;
    expect(batch).toEqual({ day: at(5, 1), ids: [idsB[0], idsB[1]] });
    const orphan = (await uploadArchiveFile(logsB, env.BLOBS, b.workspaceId, batch, SMALL))!;
    expect(orphan.ids).toEqual(batch.ids);
    const objects = async () => (await env.BLOBS.list({ prefix: `log-archive/${b.workspaceId}/` })).objects.map((o) => o.key).sort();
    expect(await objects()).toEqual([first!.key, orphan.key].sort());
    // In the crash's state, GET by id and the export still answer every log once.
    for (const id of idsB) expect(await getLog(b, id)).toEqual({ status: 200, body: byIdB.get(id) });
    expectExactly(await exported(b), byIdB, idsB);

    // Redelivery: the job runs until nothing is left past B's window.
    const runs: number[] = [];
    for (;;) {
      const run = await archiveOldLogs(getDb(env.DB), logsOf, env.BLOBS, SMALL, NOW);
      runs.push(run.logs);
      if (run.files === 0) break;
      expect(runs.length).toBeLessThan(10);
    }
    // 12 logs less the first file's one, less those inside the window; each moved once.
    expect(runs.reduce((x, y) => x + y, 0)).toBe(archivedB.length - 1);

    // 4a. The manifest: one row per object, the crash's key among them (overwritten, not doubled),
    //     and the files hold exactly the archived logs, each once, each equal to its snapshot.
    const manifest = (
      await dbB
        .prepare("SELECT day, object_key, first_id, last_id, log_count, bytes FROM request_log_archives WHERE workspace_id = ? ORDER BY day, first_id")
        .bind(b.workspaceId)
        .all<{ day: number; object_key: string; first_id: number; last_id: number; log_count: number; bytes: number }>()
    ).results;
    expect(manifest.map((m) => [new Date(m.day).toISOString().slice(0, 10), m.first_id, m.last_id, m.log_count])).toEqual([
      ["2024-04-02", idsB[10], idsB[10], 1],
      ["2024-05-01", idsB[0], idsB[1], 2],
      ["2024-05-01", idsB[2], idsB[9], 2],
      ["2024-05-05", idsB[4], idsB[4], 1],
      ["2024-05-10", idsB[5], idsB[5], 1],
    ]);
    const keys = manifest.map((m) => m.object_key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain(orphan.key);
    expect(await objects()).toEqual([...keys].sort());
    const inFiles: any[] = [];
    for (const m of manifest) {
      const object = (await env.BLOBS.get(m.object_key))!;
      expect(object.size).toBe(m.bytes);
      const lines = (await new Response(object.body.pipeThrough(new DecompressionStream("gzip"))).text()).trimEnd().split("\n").map((l) => JSON.parse(l));
      expect(lines.length).toBe(m.log_count);
      inFiles.push(...lines);
    }
    expectExactly(inFiles, byIdB, archivedB);
    // Nothing of A was archived, and nothing of B's is on A's database.
    const manifestRows = async (d1: D1Database, ws: TestKey) => (await d1.prepare("SELECT count(*) AS n FROM request_log_archives WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>())!.n;
    expect([await manifestRows(dbA, a), await manifestRows(dbA, b), await manifestRows(dbB, a)]).toEqual([0, 0, 0]);
    expect((await env.BLOBS.list({ prefix: `log-archive/${a.workspaceId}/` })).objects).toEqual([]);
    const live = async (d1: D1Database, ws: TestKey) => (await d1.prepare("SELECT id FROM request_logs WHERE workspace_id = ? ORDER BY id").bind(ws.workspaceId).all<{ id: number }>()).results.map((r) => r.id);
    expect(await live(dbB, b)).toEqual(sorted(liveB));
    expect(await live(dbA, a)).toEqual(sorted(idsA));

    // 4b. GET by id: B's every log as before (the archived ones from R2), A's every log as before;
    //     B's ids through A's key are 404s (ids never repeat across shards, src/logs/id-ranges.ts).
    for (const id of idsB) expect(await getLog(b, id)).toEqual({ status: 200, body: byIdB.get(id) });
    for (const id of idsA) expect(await getLog(a, id)).toEqual({ status: 200, body: byIdA.get(id) });
    for (const id of idsB) expect((await getLog(a, id)).status).toBe(404);

    for (const id of idsB) expect((await getLog(c, id)).status).toBe(404);
    expect(await getLog(c, idC)).toEqual({ status: 200, body: byIdC.get(idC) });

    // 4c. The export: B's whole range is exactly the snapshot, archived files first; A's is untouched.
    const exportB = await exported(b);
    expectExactly(exportB, byIdB, idsB);
    expect(exportB.slice(0, archivedB.length).map((l) => l.request_id)).toEqual([idsB[10], idsB[0], idsB[1], idsB[2], idsB[9], idsB[4], idsB[5]]);
    expect(await exported(a)).toEqual(exportA);
    expect(await exported(c)).toEqual([byIdC.get(idC)]);

    // 4d. Analytics: totals of whole days (and of no filter) come from the kept daily totals, so they
    //     do not change; a filter other than time reads the live logs only (documented).
    expect(await analytics(b, {})).toEqual(analyticsB);
    expect(await analytics(b, wholeDays)).toEqual(analyticsDaysB);
    expect((await analytics(b, { filter_group: ALL_MODELS })).totalRequests).toBe(liveB.length);
    expect(await analytics(a, {})).toEqual(analyticsA);
    const daily = await dbB.prepare("SELECT sum(requests) AS n FROM request_log_daily WHERE workspace_id = ? AND dim = 'all'").bind(b.workspaceId).first<{ n: number }>();
    expect(daily!.n).toBe(12);

    // 4e. Suggestions without a filter come from the kept facet counts: unchanged. With a filter they
    //     read the live logs: exactly the live logs' tags.
    expect(await suggestAll(b)).toEqual(suggestB);
    const liveTags = [...new Set(SPECS.filter((s) => !isArchived(s)).flatMap((s) => (s.body.tags as string[] | undefined) ?? []))];
    expect((await suggest(b, { field: "tags", filter_group: JSON.stringify(ALL_MODELS) })).sort()).toEqual(liveTags.sort());

    // 4f. Search (live tier): B's pages hold exactly the live logs, once each and as before; A's all.
    const after = await searchAll(b);
    expect(sorted(after.map((i) => i.id))).toEqual(sorted(liveB));
    for (const item of after) expect(item).toEqual(searchB.get(item.id));
    expect(await searchAll(a)).toEqual(searchA);

    // 4g. Dataset fills (live tier): by filter and by explicit ids, B's rows are the live logs once each.
    expect(sorted(await filledIds(b, {}))).toEqual(sorted(liveB));
    expect(sorted(await filledIds(b, { filter_group: ALL_MODELS }))).toEqual(sorted(liveB));
    expect(sorted(await filledIds(b, { request_log_ids: idsB }))).toEqual(sorted(liveB));
    expect(sorted(await filledIds(a, {}))).toEqual(sorted(idsA));

    // 4h. add-request-log (live tier): a live log is added, an archived one is a 404 saying so (GET still finds it).
    const group = await createGroup(b);
    for (const id of liveB) expect((await datasetPost(b, "add-request-log", { dataset_group_id: group.dataset_group.id, request_log_id: id })).status).toBe(201);
    for (const id of archivedB) {
      const res = await datasetPost(b, "add-request-log", { dataset_group_id: group.dataset_group.id, request_log_id: id });
      expect(res.status).toBe(404);
      expect((await json(res)).message).toMatch(new RegExp(`^request_log_id: request log ${id} is archived \\(past the workspace's log retention window\\)`));
    }
    const rows = await json(await call(`/api/public/v2/datasets/${group.dataset.id}/rows?per_page=100`, { key: b.key }));
    expect(rows.total).toBe(liveB.length);
    const groupA = await createGroup(a);
    for (const id of idsA) expect((await datasetPost(a, "add-request-log", { dataset_group_id: groupA.dataset_group.id, request_log_id: id })).status).toBe(201);

    // 4i. Sheet imports from request logs (live tier): B's sheet rows are the live logs once each.
    expect(sorted(await importedIds(b, {}))).toEqual(sorted(liveB));
    expect(sorted(await importedIds(b, { request_log_ids: idsB }))).toEqual(sorted(liveB));
    expect(sorted(await importedIds(a, {}))).toEqual(sorted(idsA));

    // Another run finds nothing more to do, and every reader by id still answers the same.
    expect(await archiveOldLogs(getDb(env.DB), logsOf, env.BLOBS, SMALL, NOW)).toEqual({ files: 0, logs: 0 });
    expectExactly(await exported(b), byIdB, idsB);
  }, 120_000);
});
