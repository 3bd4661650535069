// Test helpers for Signals: logs whose text steers the fake judge (test/fake-upstream.mjs), signals made
// through the API, judgements owed and announced the way the indexer and backfills do, and waiting for
// results.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { buildDeps } from "../../src/deps";
import { d1Of } from "../../src/db/client";
import { sendJudgements } from "../../src/lib/jobs";
import { queueJudgements, storeResult } from "../../src/logs";
import { call, json, type TestKey } from "./api";
import { logBody, text } from "./fixtures";

export const SIGNALS = "/api/public/v2/signals";
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;

/** Logs one request whose answer is `answer` (markers such as [[verdict:true]] steer the fake judge); answers its id. */
export async function logAnswer(ws: TestKey, answer: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await call("/log-request", {
    method: "POST",
    key: ws.key,
    json: logBody({ output: { type: "chat", messages: [{ role: "assistant", content: text(answer) }] }, ...extra }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)).id;
}

/** Logs `n` requests, ten at a time; `answer(i)` and `extra(i)` make the i-th. Answers their ids in order. */
export async function logMany(ws: TestKey, n: number, answer: (i: number) => string, extra: (i: number) => Record<string, unknown> = () => ({})): Promise<number[]> {
  const ids: number[] = [];
  for (let at = 0; at < n; at += 10) {
    const chunk = Array.from({ length: Math.min(10, n - at) }, (_, k) => at + k);
    ids.push(...(await Promise.all(chunk.map((i) => logAnswer(ws, answer(i), extra(i))))));
  }
  return ids;
}

export async function newSignal(ws: TestKey, body: Record<string, unknown> = {}) {
  const res = await call(SIGNALS, { method: "POST", key: ws.key, json: { name: uniq("signal"), statement: "Did the assistant help?", ...body } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)).signal as { id: number; revision: number; hooks: { id: number; [k: string]: any }[]; [k: string]: any };
}

/** Records judgements owed for `ids` and announces them on the signals queue, as the indexer does for a hook. */
export async function owe(ws: TestKey, signalId: number, ids: number[], hookId: number | null = null): Promise<void> {
  const store = await buildDeps(env).logs(ws.workspaceId);
  const now = Date.now();
  for (const [db, list] of await store.byDatabase(ids)) {
    const written = await queueJudgements(
      db,
      list.map((id) => ({ requestId: id, signalId, workspaceId: ws.workspaceId, hookId, backfillId: null, notBefore: now })),
      now,
    );
    await sendJudgements(env.SIGNALS, written.map((w) => ({ workspaceId: ws.workspaceId, requestId: w.requestId, signalId, delaySeconds: 0 })));
  }
}

/** The log's signal results as GET /requests/{id} would list them, read from its database. */
export async function resultsOf(ws: TestKey, requestId: number) {
  const store = await buildDeps(env).logs(ws.workspaceId);
  const db = (await store.holding(requestId))!;
  const { results } = await d1Of(db).prepare("SELECT * FROM signal_results WHERE request_id = ? ORDER BY signal_id").bind(requestId).all();
  return results as Record<string, any>[];
}

/** Of `ids` (logs of one database), those with a result of `signalId`, in id order: one query. */
export async function judgedAmong(ws: TestKey, signalId: number, ids: number[]): Promise<number[]> {
  const store = await buildDeps(env).logs(ws.workspaceId);
  const db = (await store.holding(ids[0]))!;
  const { results } = await d1Of(db)
    .prepare("SELECT request_id FROM signal_results WHERE signal_id = ? AND request_id IN (SELECT value FROM json_each(?)) ORDER BY request_id")
    .bind(signalId, JSON.stringify(ids))
    .all<{ request_id: number }>();
  return results.map((r) => r.request_id);
}

/** Waits until `check` answers something truthy (the queue runs in the background). */
export async function until<T>(check: () => Promise<T>, what: string, timeoutMs = 45_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await check();
    if (got) return got as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Not more often: each look is a read the consumer's writes wait behind.
    await sleep(150);
  }
}

/** How many judgements the workspace still owes (signal_pending rows), over its databases. */
export async function owedCount(ws: TestKey): Promise<number> {
  const store = await buildDeps(env).logs(ws.workspaceId);
  let n = 0;
  for (const p of store.periods) {
    const row = await d1Of(p.db).prepare("SELECT count(*) AS n FROM signal_pending WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>();
    n += row?.n ?? 0;
  }
  return n;
}

/** Stores a verdict of `signalId` about the log `requestId` as the consumer does (storeResult), without calling a judge. */
export async function storeVerdict(ws: TestKey, signalId: number, requestId: number, result: boolean): Promise<void> {
  const store = await buildDeps(env).logs(ws.workspaceId);
  const db = (await store.holding(requestId))!;
  const now = Date.now();
  const written = await storeResult(
    db,
    {
      requestId,
      signalId,
      workspaceId: ws.workspaceId,
      hookId: null,
      backfillId: null,
      revision: 1,
      result,
      reasoning: `judged ${result}`,
      quote: null,
      quoteVerified: false,
      status: "ok",
      error: null,
      model: "gpt-4o-mini",
      inputTokens: 1,
      outputTokens: 1,
      cost: 0,
      day: now - (now % 86_400_000),
    },
    now,
  );
  expect(written).toBe(true);
}
