// Backfills: past logs judged by a job on the jobs queue. Sampling within its binomial bounds, the time
// range and filters, max_logs, logs already judged left out, progress until completed, cancellation,
// and a job that crashes mid-way resumed by the sweeper and finishing once (each log judged once); the
// window of judgements a backfill keeps owed on the shared signals queue.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { buildDeps } from "../../../src/deps";
import { sweepJobs } from "../../../src/queue/sweeper";
import { createBackfill, isSampled, runBackfill, spendToday } from "../../../src/services/signals";
import { call, createWorkspace, json, type TestKey } from "../../helpers/api";
import { judgedAmong, logAnswer, logMany, newSignal, owedCount, SIGNALS, until } from "../../helpers/signals";

const DAY = 86_400_000;
const at = (ms: number) => ({ request_start_time: new Date(ms).toISOString(), request_end_time: new Date(ms + 500).toISOString() });
const backfillOf = async (ws: TestKey, signalId: number, id: number) => (await json(await call(`${SIGNALS}/${signalId}/backfills/${id}`, { key: ws.key }))).backfill;
const done = (ws: TestKey, signalId: number, id: number) =>
  until(async () => {
    const b = await backfillOf(ws, signalId, id);
    return ["completed", "failed", "cancelled"].includes(b.status) ? b : null;
  }, "the backfill to end", 60_000);

/** A jobs queue that keeps nothing: the test drives the backfill's job by hand. */
const idle = { send: async () => {}, sendBatch: async () => {} } as unknown as Queue;

describe("backfills", () => {
  it("judges a sampled share of the range's matching logs within its binomial bounds, once each, and completes", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: false });
    const t0 = Date.UTC(2025, 0, 1);
    const ids = await logMany(ws, 100, (i) => `answer ${i} [[verdict:${i % 4 === 0}]]`, (i) => ({ ...at(t0 + i * 1000), tags: i % 2 === 0 ? ["even"] : [] }));
    await logAnswer(ws, "before the range", at(t0 - DAY));
    await logAnswer(ws, "after the range", at(t0 + 2 * DAY));
    const res = await call(`${SIGNALS}/${s.id}/backfills`, { method: "POST", key: ws.key, json: { from: t0, to: t0 + DAY, sample_rate: 0.5, max_logs: 100_000 } });
    expect(res.status, await res.clone().text()).toBe(202);
    const created = (await json(res)).backfill;
    expect(created).toMatchObject({ status: "queued", sample_rate: 0.5, max_logs: 100_000, matched: 0 });
    const b = await done(ws, s.id, created.id);
    expect(b).toMatchObject({ status: "completed", matched: 100, remaining: 0, errors: 0, skipped: 0 });
    // 100 draws at 0.5: within 4 standard deviations (±20) of 50.
    expect(Math.abs(b.enqueued - 50)).toBeLessThanOrEqual(20);
    expect(b.judged).toBe(b.enqueued);
    expect(b.cost_usd).toBeGreaterThan(0);
    expect(b.finished_at).not.toBeNull();
    expect(await judgedAmong(ws, s.id, ids)).toEqual(ids.filter((id) => isSampled(s.id, { backfill: created.id }, id, 0.5)).sort((a, b) => a - b));
    // A second backfill over the same range (filters narrowing it to the even logs) judges only what is left.
    const again = (await json(await call(`${SIGNALS}/${s.id}/backfills`, { method: "POST", key: ws.key, json: { from: t0, to: t0 + DAY, filters: { filters: [{ field: "tags", operator: "contains", value: "even" }] } } }))).backfill;
    const b2 = await done(ws, s.id, again.id);
    expect(b2.matched).toBe(50);
    const evenJudgedBefore = ids.filter((_, i) => i % 2 === 0).length;
    expect(b2.enqueued).toBeLessThan(evenJudgedBefore);
    expect((await spendToday(buildDeps(env).db, s.id, Date.now())).runs).toBe(b.enqueued + b2.enqueued);
    const listed = (await json(await call(`${SIGNALS}/${s.id}/backfills`, { key: ws.key }))).backfills;
    expect(listed.map((x: any) => x.id)).toEqual([again.id, created.id]);
  });

  it("queues at most max_logs judgements", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws);
    const t0 = Date.UTC(2025, 1, 1);
    await logMany(ws, 12, (i) => `x ${i}`, (i) => at(t0 + i));
    const created = (await json(await call(`${SIGNALS}/${s.id}/backfills`, { method: "POST", key: ws.key, json: { from: t0, to: t0 + DAY, max_logs: 5 } }))).backfill;
    const b = await done(ws, s.id, created.id);
    expect(b).toMatchObject({ status: "completed", enqueued: 5, judged: 5 });
  });

  it("survives a crash mid-way: the sweeper resumes it and every log is judged exactly once", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws);
    const t0 = Date.UTC(2025, 2, 1);
    const ids = await logMany(ws, 30, (i) => `log ${i} [[verdict:true]]`, (i) => at(t0 + i * 10));
    const deps = buildDeps(env);
    const auth = { workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 };
    const created = await createBackfill({ ...deps, jobs: idle }, auth, s.id, { from: t0, to: t0 + DAY, sample_rate: 1, max_logs: 1000 });
    // The first page is queued and committed; the second is queued, then the job dies before it commits.
    let sends = 0;
    const dying = {
      ...deps,
      signalsQueue: {
        sendBatch: async (msgs: any[]) => {
          if (++sends > 2) throw new Error("the worker was restarted");
          await env.SIGNALS.sendBatch(msgs);
        },
      } as unknown as Queue,
    };
    // Pages of 10: the third page's send fails.
    await expect(runBackfill(dying, ws.workspaceId, created.id, 10)).rejects.toThrow("restarted");
    const mid = await backfillOf(ws, s.id, created.id);
    expect(mid).toMatchObject({ status: "running", matched: 20, enqueued: 20 });
    // Past its lease, the sweeper claims it once and queues its job again.
    const later = Date.now() + 11 * 60_000;
    const sweep = await sweepJobs(deps, later);
    expect(sweep.requeued.signal_backfill).toBe(1);
    expect((await sweepJobs(deps, later)).requeued.signal_backfill).toBeUndefined();
    const b = await done(ws, s.id, created.id);
    expect(b).toMatchObject({ status: "completed", matched: 30, enqueued: 30, judged: 30, remaining: 0 });
    await until(async () => (await owedCount(ws)) === 0, "every judgement made");
    expect(await judgedAmong(ws, s.id, ids)).toEqual([...ids].sort((a, b) => a - b));
    // One run a log: nothing was judged twice.
    expect((await spendToday(deps.db, s.id, Date.now())).runs).toBe(30);
    expect((await json(await call(`${SIGNALS}/${s.id}`, { key: ws.key }))).signal.totals).toMatchObject({ processed: 30, true: 30 });
  });

  it("keeps at most its window of judgements owed on the signals queue, reading on as they are made, and judges every log once", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws);
    const t0 = Date.UTC(2025, 4, 1);
    const ids = await logMany(ws, 40, (i) => `paced ${i} [[verdict:${i % 2 === 0}]]`, (i) => at(t0 + i * 10));
    const deps = buildDeps(env);
    const auth = { workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 };
    const created = await createBackfill({ ...deps, jobs: idle }, auth, s.id, { from: t0, to: t0 + DAY, sample_rate: 1, max_logs: 1000 });
    // What the backfill announces is held here, and let onto the real signals queue only when it waits.
    const held: MessageSendRequest[] = [];
    const holding = { ...deps, signalsQueue: { sendBatch: async (msgs: MessageSendRequest[]) => void held.push(...msgs) } as unknown as Queue };
    // Pages of 5 and a window of 10 (the defaults are 200 and BACKFILL_WINDOW): 40 logs take 4 windows.
    const WINDOW = 10;
    let most = 0;
    let windowsFull = 0;
    for (let delivery = 0; ; delivery++) {
      expect(delivery, "the backfill ends").toBeLessThan(40);
      const step = await runBackfill(holding, ws.workspaceId, created.id, 5, WINDOW);
      const owed = await owedCount(ws);
      expect(owed).toBeLessThanOrEqual(WINDOW);
      most = Math.max(most, owed);
      if (step === "done") break;
      if (step === "continue") continue;
      if (owed === WINDOW) {
        windowsFull++;
        // Full, it read no further than its window: what it queued is all it read.
        const b = await backfillOf(ws, s.id, created.id);
        expect(b).toMatchObject({ status: "running", enqueued: windowsFull * WINDOW, matched: windowsFull * WINDOW });
        // And reading again before any is judged reads nothing more.
        expect(await runBackfill(holding, ws.workspaceId, created.id, 5, WINDOW)).toEqual(step);
        expect(await owedCount(ws)).toBe(WINDOW);
      }
      if (held.length > 0) await env.SIGNALS.sendBatch(held.splice(0));
      await until(async () => (await owedCount(ws)) === 0, "the window judged");
    }
    expect(most).toBe(WINDOW);
    expect(windowsFull).toBe(4);
    const b = await backfillOf(ws, s.id, created.id);
    expect(b).toMatchObject({ status: "completed", matched: 40, enqueued: 40, judged: 40, errors: 0, remaining: 0 });
    expect(await judgedAmong(ws, s.id, ids)).toEqual([...ids].sort((a, b) => a - b));
    expect((await spendToday(deps.db, s.id, Date.now())).runs).toBe(40);
    expect((await json(await call(`${SIGNALS}/${s.id}`, { key: ws.key }))).signal.totals).toMatchObject({ processed: 40, true: 20, false: 20 });
  });

  it("is cancelled by DELETE: no more logs read, what it queued forgotten, and a second DELETE is a 409", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { statement: "x [[judge-status:503]]" });
    const t0 = Date.UTC(2025, 3, 1);
    await logMany(ws, 5, (i) => `y ${i}`, (i) => at(t0 + i));
    const deps = buildDeps(env);
    const auth = { workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 };
    const created = await createBackfill({ ...deps, jobs: idle, signalsQueue: idle }, auth, s.id, { from: t0, to: t0 + DAY, sample_rate: 1 });
    await runBackfill({ ...deps, signalsQueue: idle }, ws.workspaceId, created.id);
    expect(await owedCount(ws)).toBe(5);
    const res = await call(`${SIGNALS}/${s.id}/backfills/${created.id}`, { method: "DELETE", key: ws.key });
    expect(res.status).toBe(200);
    expect((await json(res)).backfill).toMatchObject({ status: "cancelled", remaining: 0 });
    expect(await owedCount(ws)).toBe(0);
    expect(await runBackfill(deps, ws.workspaceId, created.id)).toBe("done");
    expect((await call(`${SIGNALS}/${s.id}/backfills/${created.id}`, { method: "DELETE", key: ws.key })).status).toBe(409);
  });

  it("refuses a bad range or filter with a 400, and a fourth open backfill with a 409", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws);
    const post = (body: unknown) => call(`${SIGNALS}/${s.id}/backfills`, { method: "POST", key: ws.key, json: body });
    expect((await post({ from: 10, to: 10 })).status).toBe(400);
    expect((await post({ from: 0, to: 10, max_logs: 100_001 })).status).toBe(400);
    expect((await post({ from: 0, to: 10, max_logs: 0 })).status).toBe(400);
    expect((await post({ from: 0, to: 10, sample_rate: 2 })).status).toBe(400);
    expect((await post({ from: 0, to: 10, filters: { filters: [{ field: "bogus", operator: "is", value: 1 }] } })).status).toBe(400);
    expect((await post({ from: 0, to: 10, max_logs: 100_000 })).status).toBe(202);
    // Open ones (the job may finish the empty ones quickly, so hold three open by hand).
    const deps = buildDeps(env);
    const auth = { workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 };
    const t = await newSignal(ws);
    for (let i = 0; i < 3; i++) await createBackfill({ ...deps, jobs: idle }, auth, t.id, { from: 0, to: 10 });
    expect((await call(`${SIGNALS}/${t.id}/backfills`, { method: "POST", key: ws.key, json: { from: 0, to: 10 } })).status).toBe(409);
  });
});
