// The signals queue's consumer, end to end through the real queue and the fake judge: results stored
// beside the log with totals, signal_triggered sent once and signed, nothing judged twice (a redelivered
// message, two copies at once), retries with backoff ending in an error result, budget caps that stop
// exactly at the cap with concurrent consumers, revisions replacing older results, delays, lost
// messages sent again by the cron, disabled or deleted signals judging nothing, and an A/B release's
// guardrail acting on a signal's true-rate.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { buildDeps } from "../../../src/deps";
import { getDb } from "../../../src/db/client";
import { archiveOldLogs, archiveSettings, queueJudgements, rollupAbLogs } from "../../../src/logs";
import { assignmentKeys, runGuardrails } from "../../../src/services/releases";
import { handleJudgeBatch, judgeOne, JUDGE_LEASE_MS, MAX_JUDGE_ATTEMPTS, reserve, resendOverdueJudgements, spendToday } from "../../../src/services/signals";
import { call, createWorkspace, json, logsDb, type TestKey } from "../../helpers/api";
import { logAnswer, newSignal, owe, owedCount, resultsOf, SIGNALS, sleep, until } from "../../helpers/signals";
import { indexNow } from "../../helpers/logs";
import { exportedBetween } from "../../helpers/log-reads";
import { hookKey, hookUrl, register, verify, waitForInbox } from "../../helpers/webhooks";

const totals = async (ws: TestKey, id: number) => (await json(await call(`${SIGNALS}/${id}`, { key: ws.key }))).signal.totals;
const settled = (ws: TestKey, what = "every judgement made") => until(async () => (await owedCount(ws)) === 0, what);

describe("judging through the signals queue", () => {
  it("stores each verdict beside its log, counts it, and sends signal_triggered once, signed, for a true one", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { secret } = await register(ws, { url: hookUrl(key), events: ["signal_triggered"] });
    const s = await newSignal(ws, { enabled: true, name: "Refund promised", statement: "Did the assistant promise a refund?" });
    const yes = await logAnswer(ws, "Your refund is on its way [[verdict:true]] [[quote:Your refund is on its way]]");
    const no = await logAnswer(ws, "We cannot help [[verdict:false]]");
    const bad = await logAnswer(ws, "[[judge-bad]]");
    await owe(ws, s.id, [yes, no, bad]);
    await settled(ws);
    const [r] = await resultsOf(ws, yes);
    expect(r).toMatchObject({ signal_id: s.id, workspace_id: ws.workspaceId, revision: 1, result: 1, status: "ok", quote: "Your refund is on its way", quote_verified: 1, model: "gpt-4o-mini" });
    expect(r.reasoning).toBeTruthy();
    expect(r.cost).toBeGreaterThan(0);
    expect((await resultsOf(ws, no))[0]).toMatchObject({ result: 0, status: "ok" });
    expect((await resultsOf(ws, bad))[0]).toMatchObject({ result: null, status: "error" });
    const t = await totals(ws, s.id);
    expect(t).toMatchObject({ processed: 3, true: 1, false: 1, errors: 1, skipped: 0, true_rate: 0.5 });
    expect(t.cost_usd).toBeGreaterThan(0);
    // The log's detail lists its verdicts, and the export the same.
    const detail = await json(await call(`/api/public/v2/requests/${yes}`, { key: ws.key }));
    expect(detail.signals).toEqual([
      expect.objectContaining({ signal_id: s.id, name: "Refund promised", result: true, quote: "Your refund is on its way", quote_verified: true, status: "ok", error: null, revision: 1 }),
    ]);
    expect((await json(await call(`/api/public/v2/requests/${bad}`, { key: ws.key }))).signals).toMatchObject([{ result: null, status: "error" }]);
    const exported = (await (await call(`/api/public/v2/requests/export?from=0&to=${Date.now() + 86_400_000}`, { key: ws.key })).text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(exported.find((l) => l.request_id === yes).signals).toEqual(detail.signals);
    expect(exported.find((l) => l.request_id === no).signals).toMatchObject([{ result: false }]);
    const [delivery] = await waitForInbox(key, 1);
    expect(await verify(delivery, secret)).toBe(true);
    const event = JSON.parse(delivery.body);
    expect(event.event_type).toBe("signal_triggered");
    expect(event.details).toMatchObject({ signal_id: s.id, signal_name: "Refund promised", signal_revision: 1, request_id: yes, result: true, quote: "Your refund is on its way", quote_verified: true });
    // Owing the same judgements again (a redelivered index message, a second backfill) judges nothing again.
    await owe(ws, s.id, [yes, no, bad]);
    await settled(ws);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 3, true: 1, false: 1, errors: 1 });
    expect((await spendToday(buildDeps(env).db, s.id, Date.now())).runs).toBe(4); // the error is judged again, once
    await sleep(500);
    expect(await waitForInbox(key, 1)).toHaveLength(1);
  });

  it("judges once when two copies of a message arrive at once", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true });
    const id = await logAnswer(ws, "[[verdict:true]]");
    const store = await buildDeps(env).logs(ws.workspaceId);
    await queueJudgements((await store.holding(id))!, [{ requestId: id, signalId: s.id, workspaceId: ws.workspaceId, hookId: null, backfillId: null, notBefore: Date.now() }], Date.now());
    const body = { v: 1, kind: "signal_judge", workspace_id: ws.workspaceId, request_id: id, signal_id: s.id };
    const batch = createMessageBatch("promptedge-signals", [
      { id: "a", timestamp: new Date(), attempts: 1, body },
      { id: "b", timestamp: new Date(), attempts: 1, body },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["a", "b"]);
    expect((await spendToday(buildDeps(env).db, s.id, Date.now())).runs).toBe(1);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 1, true: 1 });
  });

  it("retries a 429 or 5xx with backoff, stores the verdict when a retry passes, and an error with the provider's message after the last attempt", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true });
    const flaky = await logAnswer(ws, "[[judge-flaky:2]] [[verdict:true]]");
    const limited = await logAnswer(ws, "[[judge-status:429]]");
    const down = await logAnswer(ws, "[[judge-status:503]]");
    const refused = await logAnswer(ws, "[[judge-status:400]]");
    await owe(ws, s.id, [flaky, limited, down, refused]);
    await settled(ws);
    expect((await resultsOf(ws, flaky))[0]).toMatchObject({ status: "ok", result: 1 });
    const limitedResult = (await resultsOf(ws, limited))[0];
    expect(limitedResult).toMatchObject({ status: "error", result: null });
    expect(limitedResult.error).toContain("429");
    expect(limitedResult.error).toContain(`gave up after ${MAX_JUDGE_ATTEMPTS} attempts`);
    expect((await resultsOf(ws, down))[0].error).toContain("503");
    // A refusal that a retry cannot change is an error at once.
    const refusedResult = (await resultsOf(ws, refused))[0];
    expect(refusedResult.error).toContain("400");
    expect(refusedResult.error).not.toContain("gave up");
    // Nothing double-counted: one run a log (retries gave their reservation back), four results.
    expect((await spendToday(buildDeps(env).db, s.id, Date.now())).runs).toBe(4);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 4, true: 1, errors: 3 });
  });

  it("lets an ok verdict replace an error of the same revision when the judgement is owed again", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true });
    const id = await logAnswer(ws, `[[judge-flaky:${MAX_JUDGE_ATTEMPTS + 1}]] [[verdict:true]] ${crypto.randomUUID()}`);
    await owe(ws, s.id, [id]);
    await settled(ws);
    expect(await resultsOf(ws, id)).toMatchObject([{ revision: 1, status: "error" }]);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 1, errors: 1, true: 0 });
    await owe(ws, s.id, [id]);
    await settled(ws);
    expect(await resultsOf(ws, id)).toMatchObject([{ revision: 1, status: "ok", result: 1 }]);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 1, errors: 0, true: 1 });
  });

  it("stops exactly at daily_runs with concurrent consumers and counts the rest as skipped", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true, limits: { daily_runs: 5 } });
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push(await logAnswer(ws, `log ${i} [[verdict:true]]`));
    await owe(ws, s.id, ids);
    await settled(ws);
    const t = await totals(ws, s.id);
    expect(t).toMatchObject({ processed: 5, true: 5, skipped: 15 });
    expect((await spendToday(buildDeps(env).db, s.id, Date.now())).runs).toBe(5);
  });

  it("grants exactly the cap among 40 reservations made at once, on runs and on cost", async () => {
    const db = buildDeps(env).db;
    const now = Date.now();
    const runs = await Promise.all(Array.from({ length: 40 }, () => reserve(db, 900_001, { dailyRuns: 7, dailyCostUsd: null }, 0.01, now)));
    expect(runs.filter(Boolean)).toHaveLength(7);
    expect(await spendToday(db, 900_001, now)).toMatchObject({ runs: 7, skipped: 33 });
    // $0.10 at $0.03 a call: three calls fit, a fourth would pass it.
    const cost = await Promise.all(Array.from({ length: 40 }, () => reserve(db, 900_002, { dailyRuns: null, dailyCostUsd: 0.1 }, 0.03, now)));
    expect(cost.filter(Boolean)).toHaveLength(3);
    const spent = await spendToday(db, 900_002, now);
    expect(spent.runs).toBe(3);
    expect(spent.cost).toBeCloseTo(0.09, 10);
    // A call that alone is over the cap is never granted; tomorrow starts from zero.
    expect(await reserve(db, 900_003, { dailyRuns: null, dailyCostUsd: 0.01 }, 0.02, now)).toBeNull();
    expect(await reserve(db, 900_001, { dailyRuns: 7, dailyCostUsd: null }, 0.01, now + 86_400_000)).not.toBeNull();
  });

  it("replaces a result when the revision moves on, and moves the totals with it (not counted twice)", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true, statement: "Helpful?" });
    const id = await logAnswer(ws, "Sure [[verdict:true]]");
    await owe(ws, s.id, [id]);
    await settled(ws);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 1, true: 1, errors: 0 });
    // The same revision owed again changes nothing; the next revision's verdict (the fake judge cannot
    // read this statement) replaces the first.
    await owe(ws, s.id, [id]);
    await settled(ws);
    expect((await resultsOf(ws, id))[0]).toMatchObject({ revision: 1, status: "ok" });
    await call(`${SIGNALS}/${s.id}`, { method: "PATCH", key: ws.key, json: { statement: "Helpful? [[judge-bad]]" } });
    await owe(ws, s.id, [id]);
    await settled(ws);
    expect(await resultsOf(ws, id)).toMatchObject([{ revision: 2, status: "error", result: null }]);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 1, true: 0, errors: 1 });
    // And a later revision's ok verdict replaces that error.
    await call(`${SIGNALS}/${s.id}`, { method: "PATCH", key: ws.key, json: { statement: "Helpful?" } });
    await owe(ws, s.id, [id]);
    await settled(ws);
    expect(await resultsOf(ws, id)).toMatchObject([{ revision: 3, status: "ok", result: 1 }]);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 1, true: 1, errors: 0 });
  });

  it("judges nothing for a disabled signal's hooks or a deleted signal, and forgets what was owed", async () => {
    const ws = await createWorkspace();
    const off = await newSignal(ws, { enabled: false });
    const gone = await newSignal(ws, { enabled: true });
    const id = await logAnswer(ws, "[[verdict:true]]");
    await call(`${SIGNALS}/${gone.id}`, { method: "DELETE", key: ws.key });
    await owe(ws, off.id, [id], 1);
    await owe(ws, gone.id, [id], 1);
    await settled(ws);
    expect(await resultsOf(ws, id)).toEqual([]);
    expect((await spendToday(buildDeps(env).db, off.id, Date.now())).runs).toBe(0);
  });

  it("purges a deleted signal's results, owed judgements and daily totals from the log's database", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true });
    const keep = await newSignal(ws, { enabled: true });
    const id = await logAnswer(ws, "[[verdict:true]]");
    await owe(ws, s.id, [id]);
    await owe(ws, keep.id, [id]);
    await settled(ws);
    expect((await resultsOf(ws, id)).map((r) => r.signal_id)).toEqual([s.id, keep.id]);
    expect((await call(`${SIGNALS}/${s.id}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    await until(async () => (await resultsOf(ws, id)).length === 1, "the deleted signal's results purged");
    expect((await resultsOf(ws, id))[0].signal_id).toBe(keep.id);
    const d1 = await logsDb(ws);
    expect((await d1.prepare("SELECT count(*) AS n FROM signal_daily WHERE signal_id = ?").bind(s.id).first<{ n: number }>())!.n).toBe(0);
  });

  it("moves a log's verdicts to R2 with the log: its archived line and its detail keep them, the database's rows go", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true, name: "Old refund" });
    const id = await logAnswer(ws, "Refund sent [[verdict:true]] [[quote:Refund sent]]", { request_start_time: "2024-01-15T10:30:00Z", request_end_time: "2024-01-15T10:30:05Z" });
    await owe(ws, s.id, [id]);
    await settled(ws);
    const before = await json(await call(`/api/public/v2/requests/${id}`, { key: ws.key }));
    expect(before.signals).toMatchObject([{ name: "Old refund", result: true, quote: "Refund sent" }]);
    expect((await call("/api/public/v2/workspace/log-retention", { method: "PUT", key: ws.key, json: { days: 30 } })).status).toBe(200);
    const deps = buildDeps(env);
    // Indexed and counted in the daily totals: what the archive waits for.
    await indexNow();
    await archiveOldLogs(deps.db, deps.logs, deps.blobs, archiveSettings(deps.env), Date.now());
    expect(await resultsOf(ws, id)).toEqual([]);
    const after = await json(await call(`/api/public/v2/requests/${id}`, { key: ws.key }));
    expect(after).toEqual(before);
    // The daily totals stay.
    expect(await totals(ws, s.id)).toMatchObject({ processed: 1, true: 1 });
    // The archived line's verdicts are shown as a live log's: under the signal's current name, and not at all once it is deleted.
    expect((await call(`${SIGNALS}/${s.id}`, { method: "PATCH", key: ws.key, json: { name: "Refund sent" } })).status).toBe(200);
    expect((await json(await call(`/api/public/v2/requests/${id}`, { key: ws.key }))).signals).toMatchObject([{ signal_id: s.id, name: "Refund sent", result: true }]);
    const line = async () => (await exportedBetween(ws, Date.parse("2024-01-15T00:00:00Z"), Date.parse("2024-01-16T00:00:00Z")))[0];
    expect((await line()).signals).toMatchObject([{ signal_id: s.id, name: "Refund sent" }]);
    await env.DB.prepare("DELETE FROM signals WHERE id = ?").bind(s.id).run();
    expect((await json(await call(`/api/public/v2/requests/${id}`, { key: ws.key }))).signals).toEqual([]);
    expect(await line()).toEqual({ ...before, signals: [] });
  });

  it("waits out the signal's delay: a message that comes early is delivered again when due", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true, delay_seconds: 60 });
    const id = await logAnswer(ws, "[[verdict:true]]");
    const deps = buildDeps(env);
    const store = await deps.logs(ws.workspaceId);
    const now = Date.now();
    await queueJudgements((await store.holding(id))!, [{ requestId: id, signalId: s.id, workspaceId: ws.workspaceId, hookId: null, backfillId: null, notBefore: now + 60_000 }], now);
    const signalRow = await (await import("../../../src/services/signals")).requireSignal(deps.db, ws.workspaceId, s.id);
    const m = { v: 1 as const, kind: "signal_judge" as const, workspace_id: ws.workspaceId, request_id: id, signal_id: s.id };
    const early = await judgeOne(deps, m, signalRow);
    expect(typeof early === "object" && early.retryAfter).toBeGreaterThanOrEqual(59);
    expect(await resultsOf(ws, id)).toEqual([]);
    // When due (the clock moved on), it is judged.
    const later = { ...deps, now: () => now + 61_000 };
    expect(await judgeOne(later, m, signalRow)).toBe("stored");
    // A second delivery finds nothing owed.
    expect(await judgeOne(later, m, signalRow)).toBe("nothing_owed");
  });

  it("writes signal_triggered again on a redelivery that finds the true result stored but the judgement still owed (a crash between)", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true });
    const id = await logAnswer(ws, "[[verdict:true]]");
    const deps = buildDeps(env);
    const logs = (await (await deps.logs(ws.workspaceId)).holding(id))!;
    const owe1 = () => queueJudgements(logs, [{ requestId: id, signalId: s.id, workspaceId: ws.workspaceId, hookId: null, backfillId: null, notBefore: 0 }], Date.now());
    await owe1();
    const signalRow = await (await import("../../../src/services/signals")).requireSignal(deps.db, ws.workspaceId, s.id);
    const m = { v: 1 as const, kind: "signal_judge" as const, workspace_id: ws.workspaceId, request_id: id, signal_id: s.id };
    const eventId = `evt_sig_${s.id}_${id}_r1`;
    const events = () => env.DB.prepare("SELECT count(*) AS n FROM webhook_events WHERE id = ?").bind(eventId).first<{ n: number }>().then((r) => r!.n);
    expect(await judgeOne(deps, m, signalRow)).toBe("stored");
    expect(await events()).toBe(1);
    expect(await owedCount(ws)).toBe(0);
    // As if the delivery had stopped after storing the result: the event not written, the judgement still owed.
    await env.DB.prepare("DELETE FROM webhook_events WHERE id = ?").bind(eventId).run();
    await owe1();
    expect(await judgeOne(deps, m, signalRow)).toBe("unchanged");
    expect(await events()).toBe(1);
    expect(await owedCount(ws)).toBe(0);
  });

  it("gives the budget back when a judgement throws after the judge call, and stores an error result at the last attempt", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true });
    const id = await logAnswer(ws, "[[verdict:false]]");
    const base = buildDeps(env);
    const logs = (await (await base.logs(ws.workspaceId)).holding(id))!;
    await queueJudgements(logs, [{ requestId: id, signalId: s.id, workspaceId: ws.workspaceId, hookId: null, backfillId: null, notBefore: 0 }], Date.now());
    const signalRow = await (await import("../../../src/services/signals")).requireSignal(base.db, ws.workspaceId, s.id);
    const m = { v: 1 as const, kind: "signal_judge" as const, workspace_id: ws.workspaceId, request_id: id, signal_id: s.id };
    // The clock's second read in a delivery (when the result is stored, after the judge answered) throws.
    let reads = 0;
    const deps = { ...base, now: () => (reads++ % 2 === 1 ? (() => { throw new Error("the clock broke"); })() : Date.now()) };
    for (let attempt = 1; attempt < MAX_JUDGE_ATTEMPTS; attempt++) {
      reads = 0;
      // Retried as a provider's failure that may pass is (the tests' backoff base is 0 s).
      expect(await judgeOne(deps, m, signalRow)).toEqual({ retryAfter: 0 });
      expect(await spendToday(base.db, s.id, Date.now())).toMatchObject({ runs: 0, cost: 0 });
      expect(await resultsOf(ws, id)).toEqual([]);
    }
    reads = 0;
    expect(await judgeOne(deps, m, signalRow)).toBe("stored");
    expect(await resultsOf(ws, id)).toMatchObject([{ status: "error", error: expect.stringContaining("the clock broke") }]);
    expect(await spendToday(base.db, s.id, Date.now())).toMatchObject({ runs: 0, cost: 0 });
    expect(await owedCount(ws)).toBe(0);
  });

  it("ends a judgement that throws before the budget is reserved as a provider's failure: backoff, nothing reserved, an error result at the last attempt, then nothing", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true });
    const id = await logAnswer(ws, "[[verdict:true]]");
    const base = buildDeps(env);
    const logs = (await (await base.logs(ws.workspaceId)).holding(id))!;
    await queueJudgements(logs, [{ requestId: id, signalId: s.id, workspaceId: ws.workspaceId, hookId: null, backfillId: null, notBefore: 0 }], Date.now());
    // A signal row no judge can be prepared from (its include unreadable): preparing the judgement throws, before any reservation.
    await env.DB.prepare("UPDATE signals SET include = 'null' WHERE id = ?").bind(s.id).run();
    const deps = { ...base, env: { ...base.env, SIGNAL_RETRY_BASE_SECONDS: "5" } };
    const m = { v: 1, kind: "signal_judge", workspace_id: ws.workspaceId, request_id: id, signal_id: s.id };
    // One delivery of the message through the queue handler: what it did with it.
    const deliver = async () => {
      const seen: string[] = [];
      await handleJudgeBatch(deps, [{ body: m, ack: () => seen.push("ack"), retry: (o) => seen.push(`retry after ${o?.delaySeconds}s`) }]);
      return seen;
    };
    for (const delay of [5, 10, 20]) {
      expect(await deliver()).toEqual([`retry after ${delay}s`]);
      expect(await resultsOf(ws, id)).toEqual([]);
      expect(await spendToday(base.db, s.id, Date.now())).toMatchObject({ runs: 0, cost: 0 });
    }
    expect(await deliver()).toEqual(["ack"]);
    expect(await resultsOf(ws, id)).toMatchObject([{ status: "error", result: null, error: expect.stringMatching(/^the judgement failed: .*\(gave up after 4 attempts\)$/) }]);
    expect(await spendToday(base.db, s.id, Date.now())).toMatchObject({ runs: 0, cost: 0 });
    expect(await owedCount(ws)).toBe(0);
    expect(await totals(ws, s.id)).toMatchObject({ processed: 1, errors: 1 });
    // Nothing is owed any more: another copy of the message is acknowledged and judges nothing.
    expect(await deliver()).toEqual(["ack"]);
    expect(await resultsOf(ws, id)).toHaveLength(1);
  });

  it("sends again a judgement whose message was lost (the cron), and not one a delivery holds", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true });
    const [lost, held] = [await logAnswer(ws, "[[verdict:true]]"), await logAnswer(ws, "[[verdict:true]]")];
    const deps = buildDeps(env);
    const store = await deps.logs(ws.workspaceId);
    const db = (await store.holding(lost))!;
    const now = Date.now();
    const owed = [lost, held].map((requestId) => ({ requestId, signalId: s.id, workspaceId: ws.workspaceId, hookId: null, backfillId: null, notBefore: now }));
    await queueJudgements(db, owed, now);
    // `held` is in a delivery's hands until its lease runs out.
    await (await import("../../../src/logs")).claimJudgement(db, held, s.id, now + 200_000, JUDGE_LEASE_MS);
    expect(await resendOverdueJudgements(deps, db, now + 60_000)).toBe(0); // not overdue yet
    expect(await resendOverdueJudgements(deps, db, now + 200_000)).toBeGreaterThanOrEqual(1);
    await until(async () => (await resultsOf(ws, lost)).length === 1, "the lost judgement made");
    expect(await resultsOf(ws, held)).toEqual([]);
  });
  it("rolls an A/B release back when its guardrail's signal true-rate regresses in the challenger", async () => {
    const ws = await createWorkspace();
    const name = `ab-${crypto.randomUUID().slice(0, 8)}`;
    const publish = async (labels: string[]) => {
      const res = await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "chat", messages: [] } }, release_labels: labels } });
      expect(res.status).toBe(200);
      return (await json(res)) as { id: number };
    };
    const t = await publish(["prod"]);
    await publish([]);
    const s = await newSignal(ws, { enabled: true, name: "Stays polite", hooks: [{ scope: "all", sample_rate: 0 }] });
    const guardrails = { min_duration_hours: 0, min_samples_per_variant: 10, metrics: [{ type: "signal", name: "Stays polite", direction: "higher_is_better", max_regression: 0.05 }], on_success: "promote" };
    const created = await call("/api/public/v2/ab-tests", {
      method: "POST",
      key: ws.key,
      json: { name: "politeness", prompt_template_id: t.id, release_label: "prod", variants: [{ key: "base", prompt_version_number: 1, percentage: 50 }, { key: "challenger", prompt_version_number: 2, percentage: 50 }], guardrails },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const id = (await json(created)).ab_test.id;
    // Every request succeeds (the error rate cannot decide); the challenger's answers are judged impolite.
    const ids: number[] = [];
    for (const [version, verdict] of [[1, "true"], [2, "false"]] as const) {
      for (let i = 0; i < 10; i++) ids.push(await logAnswer(ws, `answer ${version}.${i} [[verdict:${verdict}]]`, { prompt_id: t.id, prompt_version_number: version }));
    }
    await owe(ws, s.id, ids);
    await settled(ws);
    await rollupAbLogs(getDb(await logsDb(ws)), (ids) => assignmentKeys(getDb(env.DB), ids));
    const card = await json(await call(`/api/public/v2/ab-tests/${id}/scorecard`, { key: ws.key }));
    const byKey = Object.fromEntries(card.variants.map((v: { key: string }) => [v.key, v]));
    expect(byKey.base.signals["Stays polite"]).toMatchObject({ n: 10, true_rate: 1 });
    expect(byKey.challenger.signals["Stays polite"]).toMatchObject({ n: 10, true_rate: 0 });
    // Far enough on that the release is due, however recently another test evaluated guardrails.
    await runGuardrails(getDb(env.DB), (w) => buildDeps(env).logs(w), Date.now() + 3_600_000 * 24 * 30);
    expect((await json(await call(`/api/public/v2/ab-tests/${id}`, { key: ws.key }))).ab_test).toMatchObject({ status: "completed", outcome: "rolled_back" });
    const events = (await json(await call(`/api/public/v2/ab-tests/${id}/events`, { key: ws.key }))).events;
    expect(events[0]).toMatchObject({ actor: "guardrail", details: { variant: "challenger", metric: "signal:Stays polite" } });
    // The scorecard's signal rows are the signal's by id: shown under its current name, and gone with it.
    const signalsOf = async () => Object.fromEntries((await json(await call(`/api/public/v2/ab-tests/${id}/scorecard`, { key: ws.key }))).variants.map((v: { key: string; signals: unknown }) => [v.key, v.signals]));
    expect((await call(`${SIGNALS}/${s.id}`, { method: "PATCH", key: ws.key, json: { name: "Polite" } })).status).toBe(200);
    expect(await signalsOf()).toMatchObject({ base: { Polite: { n: 10, true_rate: 1 } }, challenger: { Polite: { n: 10, true_rate: 0 } } });
    await env.DB.prepare("DELETE FROM signals WHERE id = ?").bind(s.id).run();
    const again = await newSignal(ws, { name: "Polite" });
    expect(again.id).not.toBe(s.id);
    expect(await signalsOf()).toEqual({ base: {}, challenger: {} });
  });
});
