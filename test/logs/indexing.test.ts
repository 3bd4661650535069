// Deferred indexing (src/logs/indexing.ts): a log is stored and readable when its write answers, and
// its search entry, facet counts and daily totals follow through the index queue, or
// the cron's sweeper when the queue loses or refuses the message. Writes here go straight to the
// Worker's handler with an index queue of the test's own (one that records, or one that fails), so
// what is indexed when is the test's to decide.
import { createExecutionContext, createMessageBatch, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { buildDeps } from "../../src/deps";
import { getDb } from "../../src/db/client";
import { indexLogs, indexPending, placeWorkspace, SWEEP_AFTER_MS } from "../../src/logs";
import { COUNT_AFTER_MS } from "../../src/logs/indexing";
import { pickArchiveBatch, DEFAULT_ARCHIVE_SETTINGS } from "../../src/logs/archive";
import { indexQuietly } from "../../src/queue/scheduled";
import type { IndexLogsMessage } from "../../src/lib/jobs";
import { ID_RANGE_SIZE, idRangeFor, idRangeOf } from "../../src/logs/id-ranges";
import { addKey, call, createWorkspace, json, logsDb, placeOn, type TestKey } from "../helpers/api";
import { bulkSpan, logBody, text } from "../helpers/fixtures";
import { indexNow } from "../helpers/logs";
import { logValuesSql } from "../../src/filters";

/** An index queue that keeps what is sent to it and delivers nothing. */
function recordingQueue() {
  const sent: IndexLogsMessage[] = [];
  const queue = { send: async (body: IndexLogsMessage) => void sent.push(body), sendBatch: async () => {} } as unknown as Queue;
  return { sent, queue };
}
const failingQueue = { send: () => Promise.reject(new Error("queue unavailable")), sendBatch: () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue;

/** A POST to the Worker's handler with `queue` as its index queue; returns once the work after the answer is done too. */
async function post(path: string, key: string, body: unknown, queue: Queue): Promise<Response> {
  const ctx = createExecutionContext();
  const req = new Request(`http://api.test${path}`, { method: "POST", headers: { "X-API-KEY": key, "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const res = await worker.fetch(req, { ...env, INDEX: queue }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

async function logQuietly(ws: TestKey, body: Record<string, unknown>, queue: Queue): Promise<number> {
  const res = await post("/log-request", ws.key, body, queue);
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(201);
  return b.id;
}

async function searchIds(ws: TestKey, filter_group: unknown, q?: string): Promise<number[]> {
  const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group, q, per_page: 100 } });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.items.map((i: { id: number }) => i.id).sort((a: number, b: number) => a - b);
}
const byTag = (tag: string) => ({ logic: "AND", filters: [{ field: "tags", operator: "contains", value: tag }] });

/** SQL: the log r is indexed (its id within the database's watermark, and not listed as waiting from before it). */
const INDEXED = "(r.id <= (SELECT indexed_to FROM log_index_state WHERE id = 1) AND r.id NOT IN (SELECT request_id FROM request_log_unindexed))";

/** Everything indexing writes for a workspace, in a form two workspaces can be compared by (log ids left out). */
async function indexState(ws: TestKey) {
  const d1 = await logsDb(ws);
  const all = async (q: string) => (await d1.prepare(q).bind(ws.workspaceId).all()).results;
  return {
    // The keyed values of its indexed logs, as their rows give them: what the search entries' keys are made of.
    sideRows: await all(
      `SELECT e.kind, e.key, e.value FROM ${logValuesSql("r", undefined, { from: "request_logs AS r", where: `r.workspace_id = ?1 AND ${INDEXED}` })} AS e ORDER BY e.kind, e.key, e.value`,
    ),
    facets: await all("SELECT field, key, value, value_fold, count FROM request_log_facets WHERE workspace_id = ? ORDER BY field, key, value"),
    daily: await all("SELECT dim, day, key, bucket, requests, input_tokens, output_tokens, cost, latency_ms FROM request_log_daily WHERE workspace_id = ? ORDER BY dim, key, day, bucket"),
    fts: await all("SELECT count(*) AS n FROM request_log_search WHERE request_log_search MATCH '{input_text output_text} : unicorns' AND rowid IN (SELECT id FROM request_logs WHERE workspace_id = ?)"),
    waiting: await all(`SELECT count(*) AS n FROM request_logs AS r WHERE r.workspace_id = ? AND NOT ${INDEXED}`),
  };
}

const BODY = logBody({
  tags: ["deferred", "eu"],
  metadata: { user_id: "u1", env: "prod" },
  prompt_input_variables: { topic: "unicorns" },
  input: { type: "chat", messages: [{ role: "user", content: text("Tell me about unicorns") }], tools: [{ type: "function", function: { name: "lookup" } }] },
  output: { type: "chat", messages: [{ role: "assistant", content: text('{"answer": "unicorns are rare"}') }] },
  input_tokens: 7,
  output_tokens: 11,
  price: 0.25,
});

/** A track-request body (an OpenAI call about unicorns, tagged like BODY). */
const TRACKED = {
  function_name: "openai.chat.completions.create",
  provider_type: "openai",
  kwargs: { model: "gpt-4o", messages: [{ role: "user", content: "Tell me about unicorns" }] },
  request_response: { id: "c1", object: "chat.completion", model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: "unicorns!" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1 } },
  tags: ["deferred"],
};

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});

describe("a log before and after indexing", () => {
  it("is readable by id at once, searchable once the queue's message is consumed, and a redelivery changes nothing", async () => {
    const { sent, queue } = recordingQueue();
    const id = await logQuietly(ws, BODY, queue);

    expect((await call(`/api/public/v2/requests/${id}`, { key: ws.key })).status).toBe(200);
    expect(await searchIds(ws, byTag("deferred"))).toEqual([]);
    expect(await searchIds(ws, null, "unicorns")).toEqual([]);
    expect((await indexState(ws)).waiting).toEqual([{ n: 1 }]);
    // One message, naming the log database the log is in.
    expect(sent).toEqual([{ v: 1, kind: "index_logs", shard: await placeWorkspace(getDb(env.DB), env, ws.workspaceId), ids: [id] }]);

    const deliver = async (attempt: string) => {
      const batch = createMessageBatch("promptedge-index", [{ id: attempt, timestamp: new Date(), attempts: 1, body: sent[0] }]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env);
      return getQueueResult(batch, ctx);
    };
    expect((await deliver("m1")).explicitAcks).toEqual(["m1"]);
    expect(await searchIds(ws, byTag("deferred"))).toEqual([id]);
    expect(await searchIds(ws, null, "unicorns")).toEqual([id]);
    // The daily totals follow a larger batch later (countDaily): the sweep once the log has waited COUNT_AFTER_MS.
    expect((await indexState(ws)).daily).toEqual([]);
    await indexQuietly(buildDeps(env), Date.now() + COUNT_AFTER_MS);
    const once = await indexState(ws);
    expect(once.waiting).toEqual([{ n: 0 }]);
    expect(once.sideRows).toEqual(
      [
        ["input_variable", "topic", "unicorns"],
        ["metadata", "env", "prod"],
        ["metadata", "user_id", "u1"],
        ["output", "answer", "unicorns are rare"],
        ["tag", "", "deferred"],
        ["tag", "", "eu"],
        ["tool", "", "lookup"],
      ].map(([kind, key, value]) => ({ kind, key, value })),
    );
    // A value already lower case keeps no fold of its own.
    expect(once.facets).toContainEqual({ field: "engine", key: "", value: "gpt-4o", value_fold: null, count: 1 });
    expect(once.daily.filter((d) => d.dim === "all")).toEqual([
      expect.objectContaining({ requests: 1, input_tokens: 7, output_tokens: 11, cost: 0.25, latency_ms: 5000 }),
    ]);

    // The same message again (a queue delivers at least once): nothing is counted twice.
    expect((await deliver("m2")).explicitAcks).toEqual(["m2"]);
    expect(await indexState(ws)).toEqual(once);
  });

  it("a tracking call before indexing and the same call after it leave the same rows, counts and totals", async () => {
    const before = await createWorkspace();
    const after = await createWorkspace();
    const promptIds = new Map<TestKey, Map<string, string>>();
    for (const w of [before, after]) {
      promptIds.set(w, new Map());
      for (const name of ["router", "planner"]) {
        const res = await call("/rest/prompt-templates", {
          method: "POST",
          key: w.key,
          json: {
            prompt_template: { prompt_name: name },
            prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: text("hi") }] }, metadata: { model: { provider: "openai", name: "gpt-4o", parameters: {} } } },
          },
        });
        expect(res.status).toBe(200);
        promptIds.get(w)!.set(String((await json(res)).id), name);
      }
    }
    // The two workspaces' templates have different ids: each state names them by their names.
    const stateOf = async (w: TestKey) => {
      const s = await indexState(w);
      const named = (v: unknown) => promptIds.get(w)!.get(v as string) ?? v;
      return {
        ...s,
        facets: s.facets.map((f) => (f.field === "prompt" ? { ...f, key: named(f.key) } : f.field === "prompt_id" ? { ...f, value: named(f.value), value_fold: named(f.value_fold) } : f)),
        daily: s.daily.map((d) => (d.dim === "prompt" ? { ...d, key: named(d.key) } : d)),
      };
    };
    const track = async (w: TestKey, id: number) => {
      for (const [path, body] of [
        ["/rest/track-metadata", { request_id: id, metadata: { env: "staging", session: "s9" } }],
        ["/rest/track-prompt", { request_id: id, prompt_name: "router", prompt_input_variables: { topic: "griffins", n: 2 } }],
        ["/rest/track-prompt", { request_id: id, prompt_name: "planner" }],
        ["/rest/track-score", { request_id: id, score: 80, name: "accuracy" }],
      ] as const) {
        const res = await call(path, { method: "POST", key: w.key, json: body });
        expect(res.status, `${path} ${JSON.stringify(await res.clone().json())}`).toBe(200);
      }
    };
    const { queue } = recordingQueue();
    const early = await logQuietly(before, BODY, queue);
    await track(before, early);
    await indexNow();
    const late = await logQuietly(after, BODY, queue);
    await indexNow();
    await track(after, late);

    const [a, b] = [await stateOf(before), await stateOf(after)];
    expect(a).toEqual(b);
    // And they say what the log says now: the new metadata and variables, the linked prompt.
    expect(a.sideRows).toContainEqual({ kind: "metadata", key: "env", value: "staging" });
    expect(a.sideRows).not.toContainEqual({ kind: "input_variable", key: "topic", value: "unicorns" });
    expect(a.facets.filter((f) => f.field === "prompt")).toEqual([expect.objectContaining({ key: "planner", value: "planner", count: 1 })]);
    expect(a.daily.filter((d) => d.dim === "prompt")).toEqual([expect.objectContaining({ key: "planner", requests: 1, input_tokens: 7 })]);
    for (const w of [before, after]) {
      const filter = { logic: "AND", filters: [{ field: "metadata", operator: "key_equals", nested_key: "env", value: "staging" }] };
      expect(await searchIds(w, filter)).toHaveLength(1);
    }
  });

  it("a batch that a tracking call changes between its read and its write writes nothing, and the next read indexes the log as it is then", async () => {
    const w = await createWorkspace();
    const id = await logQuietly(w, BODY, recordingQueue().queue);
    const d1 = await logsDb(w);
    let raced = false;
    // The D1 binding with a tracking call's update landing just before the indexer's first batch.
    const racing = new Proxy(d1, {
      get(target, prop) {
        if (prop === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            if (!raced) {
              raced = true;
              await target
                .prepare(`UPDATE request_logs SET metadata = json_patch(metadata, '{"env":"raced"}') WHERE id = ?`)
                .bind(id)
                .run();
            }
            return target.batch(statements);
          };
        }
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    expect(await indexLogs(getDb(racing), [id])).toBe(1);
    expect(raced).toBe(true);
    const state = await indexState(w);
    expect(state.sideRows).toContainEqual({ kind: "metadata", key: "env", value: "raced" });
    expect(state.sideRows).not.toContainEqual({ kind: "metadata", key: "env", value: "prod" });
    expect(state.facets.filter((f) => f.field === "engine")).toEqual([expect.objectContaining({ count: 1 })]);
  });
  it("a batch racing other indexers that keep moving the watermark goes on while they progress, and indexes what is left", async () => {
    const w = await createWorkspace();
    const ids: number[] = [];
    for (let n = 0; n < 12; n++) ids.push(await logQuietly(w, logBody({ tags: ["raced"] }), recordingQueue().queue));
    const d1 = await logsDb(w);
    let moves = 0;
    // Before each of this indexer's first eight D1 batches, another indexer takes one log: every
    // write of the first four attempts finds the watermark moved (more than the attempts a stall gets).
    const racing = new Proxy(d1, {
      get(target, prop) {
        if (prop === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            if (moves < 8) {
              moves++;
              await indexPending(getDb(target), { limit: 1 });
            }
            return target.batch(statements);
          };
        }
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const own = await indexLogs(getDb(racing), [Math.max(...ids)]);
    expect(moves).toBe(8);
    expect(own).toBeGreaterThan(0);
    expect(own).toBeLessThan(12);
    expect((await searchIds(w, byTag("raced"))).sort((a, b) => a - b)).toEqual(ids);
  });
});

describe("announcing new logs", () => {
  it("logs written together are announced once each (one message per isolate and window), and a refused body announces nothing", async () => {
    const w = await createWorkspace();
    const { sent, queue } = recordingQueue();
    const ids = await Promise.all([1, 2, 3].map((n) => logQuietly(w, logBody({ tags: [`batch-${n}`] }), queue)));
    expect(sent.flatMap((m) => m.ids).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    expect(sent.length).toBeLessThanOrEqual(ids.length);

    const before = sent.length;
    const refused = await post("/log-request", w.key, logBody({ score: 101 }), queue);
    expect(refused.status).toBe(400);
    expect(sent.length).toBe(before);
    expect((await indexState(w)).waiting).toEqual([{ n: 3 }]);
  });
});

describe("a queue that is down", () => {
  it("does not fail or lose a log-request, a track-request or a spans-bulk: the sweeper indexes them once they are SWEEP_AFTER_MS old", async () => {
    const w = await createWorkspace();
    const logged = await logQuietly(w, BODY, failingQueue);
    const tracked = await post(
      "/track-request",
      w.key,
      TRACKED,
      failingQueue,
    );
    expect(tracked.status, JSON.stringify(await tracked.clone().json())).toBe(200);
    const span = { trace_id: "a".repeat(32), span_id: "b".repeat(16) };
    const bulk = await post(
      "/spans-bulk",
      w.key,
      {
        spans: [
          {
            name: "llm call",
            context: span,
            kind: 1,
            start_time: 1_700_000_000_000,
            end_time: 1_700_000_001_000,
            status: { status_code: 0 },
            attributes: {},
            events: [],
            links: [],
            resource: { attributes: {} },
            log_request: { provider: "openai", model: "gpt-4o", input: BODY.input, output: BODY.output, tags: ["deferred"] },
          },
        ],
      },
      failingQueue,
    );
    const bulkBody = await json(bulk);
    expect(bulk.status, JSON.stringify(bulkBody)).toBe(201);
    const ids = [logged, (await json(tracked)).request_id, bulkBody.request_logs[0].id].sort((a, b) => a - b);

    for (const id of ids) expect((await call(`/api/public/v2/requests/${id}`, { key: w.key })).status).toBe(200);
    expect(await searchIds(w, byTag("deferred"))).toEqual([]);

    // The sweep of the minute the logs were written leaves them (their message may still come) …
    const deps = buildDeps(env);
    await indexQuietly(deps, Date.now());
    expect(await searchIds(w, byTag("deferred"))).toEqual([]);
    // … the next one indexes them.
    await indexQuietly(deps, Date.now() + SWEEP_AFTER_MS + 1000);
    expect(await searchIds(w, byTag("deferred"))).toEqual(ids);
    expect(await searchIds(w, { logic: "AND", filters: [{ field: "trace_id", operator: "is", value: span.trace_id }] })).toEqual([bulkBody.request_logs[0].id]);
    expect((await indexState(w)).waiting).toEqual([{ n: 0 }]);
  });
});

describe("the queue's own path", () => {
  it("a log written through the Worker's entrypoint becomes searchable without anyone draining", async () => {
    const w = await createWorkspace();
    const res = await call("/log-request", { method: "POST", key: w.key, json: logBody({ tags: ["via-queue"] }) });
    const { id } = await json(res);
    expect(res.status).toBe(201);
    const until = Date.now() + 20_000;
    let found: number[] = [];
    while (Date.now() < until && found.length === 0) {
      found = await searchIds(w, byTag("via-queue"));
      if (found.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(found).toEqual([id]);
  });
});

describe("logs not yet indexed elsewhere", () => {
  it("a deleted unindexed log leaves the watermark and the search index whole, and the next logs are indexed past it", async () => {
    const w = await createWorkspace();
    const id = await logQuietly(w, BODY, recordingQueue().queue);
    const d1 = await logsDb(w);
    await d1.prepare("DELETE FROM request_logs WHERE id = ?").bind(id).run();
    await d1.prepare("INSERT INTO request_log_search (request_log_search) VALUES ('integrity-check')").run();
    // Another call (not the same bytes again, which a retry would be).
    const next = await logQuietly(w, { ...BODY, metadata: { user_id: "u2", env: "prod" } }, recordingQueue().queue);
    await indexNow();
    expect(await searchIds(w, null, "unicorns")).toEqual([next]);
    expect((await indexState(w)).waiting).toEqual([{ n: 0 }]);
  });

  it("a log inserted without its extra values (a Worker of the version before them) is indexed from its row by the sweeper and deleted cleanly", async () => {
    const w = await createWorkspace();
    const id = await logQuietly(w, BODY, recordingQueue().queue);
    const d1 = await logsDb(w);
    // The row inserted as the earlier version did: every column but extra_values.
    const cols = Object.keys((await d1.prepare("SELECT * FROM request_logs WHERE id = ?").bind(id).first())!)
      .filter((c) => c !== "id" && c !== "extra_values")
      .join(", ");
    const copy = (await d1.prepare(`INSERT INTO request_logs (${cols}) SELECT ${cols} FROM request_logs WHERE id = ? RETURNING id`).bind(id).first<{ id: number }>())!.id;
    expect(await d1.prepare("SELECT extra_values FROM request_logs WHERE id = ?").bind(copy).first("extra_values")).toBeNull();
    await indexNow();
    expect(await searchIds(w, null, "unicorns")).toEqual([id, copy]);
    // Its values were made from its row, the tool names from its stored blueprints.
    expect(await searchIds(w, byTag("deferred"))).toEqual([id, copy]);
    expect(await searchIds(w, { logic: "AND", filters: [{ field: "tool_names", operator: "contains", value: "lookup" }] })).toEqual([id, copy]);
    expect(await d1.prepare("SELECT extra_values FROM request_logs WHERE id = ?").bind(copy).first("extra_values")).toBe(
      await d1.prepare("SELECT extra_values FROM request_logs WHERE id = ?").bind(id).first("extra_values"),
    );
    await d1.prepare("DELETE FROM request_logs WHERE id = ?").bind(copy).run();
    await d1.prepare("INSERT INTO request_log_search (request_log_search) VALUES ('integrity-check')").run();
    expect(await searchIds(w, null, "unicorns")).toEqual([id]);
  });

  it("the archive job's file of a day stops before the first log of that day not yet indexed", async () => {
    const w = await createWorkspace();
    const at = (h: number) => `2024-03-03T0${h}:00:00Z`;
    const first = await logQuietly(w, logBody({ request_start_time: at(1), request_end_time: at(1) }), recordingQueue().queue);
    await indexNow();
    const rest = [await logQuietly(w, logBody({ request_start_time: at(2), request_end_time: at(2) }), recordingQueue().queue)];
    rest.push(await logQuietly(w, logBody({ request_start_time: at(3), request_end_time: at(3) }), recordingQueue().queue));
    const logs = getDb(await logsDb(w));
    const cutoff = Date.parse("2024-03-10T00:00:00Z");
    expect((await pickArchiveBatch(logs, w.workspaceId, cutoff, DEFAULT_ARCHIVE_SETTINGS))?.ids).toEqual([first]);
    await indexNow();
    expect((await pickArchiveBatch(logs, w.workspaceId, cutoff, DEFAULT_ARCHIVE_SETTINGS))?.ids).toEqual([first, ...rest]);
  });
});

// ---- with id ranges, periods and idempotency keys (main's log store met deferred indexing here) ----

/** Delivers index messages to the Worker's consumer as one batch; the ids its messages acknowledged. */
async function deliverAll(messages: IndexLogsMessage[]): Promise<string[]> {
  const batch = createMessageBatch("promptedge-index", messages.map((body, i) => ({ id: `d${i}`, timestamp: new Date(), attempts: 1, body })));
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return (await getQueueResult(batch, ctx)).explicitAcks;
}

/** The ids each message names, by the database it names. */
const idsByShard = (messages: IndexLogsMessage[]) => {
  const out: Record<string, number[]> = {};
  for (const m of messages) (out[m.shard] ??= []).push(...m.ids);
  for (const ids of Object.values(out)) ids.sort((a, b) => a - b);
  return out;
};

const d1Named = (shard: string): D1Database => (shard === "DB" ? env.DB : (env as unknown as Record<string, D1Database>)[shard]);
const countIn = async (shard: string, q: string, ...params: unknown[]) => (await d1Named(shard).prepare(q).bind(...params).first<{ n: number }>())!.n;
/** Moves `w` on to a new period on `to` without measuring anything: what openPeriod records when its database is full. */
const beginPeriod = (w: TestKey, periods: string[]) =>
  env.DB.prepare("UPDATE workspaces SET log_shard = ?, log_periods = ? WHERE id = ?").bind(periods[periods.length - 1], JSON.stringify(periods), w.workspaceId).run();

const llmSpan = (traceId: string, spanId: string, tag: string, over: Record<string, unknown> = {}) =>
  bulkSpan(traceId, spanId, {
    name: `llm-${tag}`,
    log_request: { provider: "openai", model: "gpt-4o", input: BODY.input, output: BODY.output, tags: [tag] },
    ...over,
  });

describe("id ranges, periods and idempotency keys", () => {
  it("moving a database into its id range leaves no waiting log, no log and a whole search index", async () => {
    // Every database this file wrote to was moved on first use (a placeholder log inserted and deleted).
    await createWorkspace().then(async (w) => {
      await placeOn(w, "LOGS_1");
      await logQuietly(w, BODY, recordingQueue().queue);
    });
    // Every log indexed: the full-text index then holds exactly the logs' texts.
    await indexNow();
    for (const shard of ["DB", "LOGS_0", "LOGS_1"]) {
      const base = (await idRangeFor(env.DB, shard)) * ID_RANGE_SIZE;
      expect(await countIn(shard, "SELECT count(*) AS n FROM request_log_unindexed WHERE request_id = ?", base)).toBe(0);
      expect(await countIn(shard, "SELECT count(*) AS n FROM request_logs WHERE id = ? OR workspace_id = 0", base)).toBe(0);
      expect(await countIn(shard, "SELECT count(*) AS n FROM request_log_daily WHERE workspace_id = 0")).toBe(0);
      expect(await countIn(shard, "SELECT count(*) AS n FROM request_log_facets WHERE workspace_id = 0")).toBe(0);
      // Nothing waits: the watermark is at the newest log (or the range's base, with none).
      expect(await countIn(shard, "SELECT count(*) AS n FROM request_logs WHERE id > (SELECT indexed_to FROM log_index_state)")).toBe(0);
      expect(await countIn(shard, "SELECT count(*) AS n FROM request_log_search WHERE rowid = ?", base)).toBe(0);
      await d1Named(shard).prepare("INSERT INTO request_log_search (request_log_search) VALUES ('integrity-check')").run();
    }
  });

  it("a span joining a trace begun in an older period: its log is announced for and indexed in that database, the current period's in theirs", async () => {
    const w = await createWorkspace();
    await placeOn(w, "LOGS_0");
    const t = "c".repeat(32);
    const first = recordingQueue();
    const began = await post("/spans-bulk", w.key, { spans: [bulkSpan(t, "1".repeat(16)), llmSpan(t, "2".repeat(16), "old-trace", { parent_id: "1".repeat(16) })] }, first.queue);
    expect(began.status).toBe(201);
    const firstLog = (await json(began)).request_logs[0].id;
    expect(idsByShard(first.sent)).toEqual({ LOGS_0: [firstLog] });

    await beginPeriod(w, ["LOGS_0", "LOGS_1"]);
    // A fresh key: an isolate's cached key context knows the periods it was read with (AUTH_KEY_CACHE_MS).
    const key = await addKey(w);
    const now = { ...w, key };
    const second = recordingQueue();
    const later = await post(
      "/spans-bulk",
      key,
      { spans: [llmSpan(t, "3".repeat(16), "old-trace", { parent_id: "1".repeat(16) }), bulkSpan("d".repeat(32), "4".repeat(16)), llmSpan("d".repeat(32), "5".repeat(16), "new-trace", { parent_id: "4".repeat(16) })] },
      second.queue,
    );
    const laterBody = await json(later);
    expect(later.status, JSON.stringify(laterBody)).toBe(201);
    const [joined, fresh] = laterBody.request_logs.map((l: { id: number }) => l.id);
    const logged = await logQuietly(now, logBody({ tags: ["new-trace"] }), second.queue);
    // The joining span's log is in LOGS_0's range and waits there; the new trace's and log-request's in LOGS_1.
    expect([idRangeOf(joined), idRangeOf(fresh), idRangeOf(logged)]).toEqual([await idRangeFor(env.DB, "LOGS_0"), ...Array(2).fill(await idRangeFor(env.DB, "LOGS_1"))]);
    expect(idsByShard(second.sent)).toEqual({ LOGS_0: [joined], LOGS_1: [fresh, logged].sort((a, b) => a - b) });
    expect(await countIn("LOGS_0", "SELECT count(*) AS n FROM request_logs WHERE id = ? AND id > (SELECT indexed_to FROM log_index_state)", joined)).toBe(1);
    expect(await searchIds(now, byTag("old-trace"))).toEqual([]);

    // The consumer indexes each database's ids there: both of T's logs found, counted under T once each.
    expect((await deliverAll([...first.sent, ...second.sent])).length).toBe(first.sent.length + second.sent.length);
    expect(await searchIds(now, byTag("old-trace"))).toEqual([firstLog, joined]);
    expect(await searchIds(now, byTag("new-trace"))).toEqual([fresh, logged].sort((a, b) => a - b));
    for (const shard of ["LOGS_0", "LOGS_1"]) {
      expect(await countIn(shard, "SELECT count(*) AS n FROM request_logs WHERE workspace_id = ? AND id > (SELECT indexed_to FROM log_index_state)", w.workspaceId)).toBe(0);
    }
    expect(await countIn("LOGS_0", "SELECT coalesce(sum(count), 0) AS n FROM request_log_facets WHERE workspace_id = ? AND field = 'trace_id' AND value = ?", w.workspaceId, t)).toBe(2);
    expect(await countIn("LOGS_1", "SELECT count(*) AS n FROM request_log_facets WHERE workspace_id = ? AND field = 'trace_id' AND value = ?", w.workspaceId, t)).toBe(0);
  });

  it("a log of an older period that learns its trace from a span in another database is counted under the trace alike, indexed before or after", async () => {
    const counts: number[] = [];
    for (const indexFirst of [true, false]) {
      const w = await createWorkspace();
      await placeOn(w, "LOGS_0");
      const spanId = indexFirst ? "6".repeat(16) : "7".repeat(16);
      const trace = indexFirst ? "e".repeat(32) : "f".repeat(32);
      const tracked = await post("/track-request", w.key, { ...TRACKED, span_id: spanId }, recordingQueue().queue);
      const logId = (await json(tracked)).request_id;
      if (indexFirst) await indexNow();
      await beginPeriod(w, ["LOGS_0", "LOGS_1"]);
      // A new trace begins in LOGS_1 with the span the log named (no log of its own).
      const now = { ...w, key: await addKey(w) };
      const res = await post("/spans-bulk", now.key, { spans: [bulkSpan(trace, spanId)] }, recordingQueue().queue);
      expect(res.status).toBe(201);
      expect(((await json(await call(`/api/public/v2/requests/${logId}`, { key: w.key }))) as { trace_id: string }).trace_id).toBe(trace);
      await indexNow();
      counts.push(await countIn("LOGS_0", "SELECT coalesce(sum(count), 0) AS n FROM request_log_facets WHERE workspace_id = ? AND field = 'trace_id' AND value = ?", w.workspaceId, trace));
      expect(await searchIds(now, { logic: "AND", filters: [{ field: "trace_id", operator: "is", value: trace }] })).toEqual([logId]);
    }
    expect(counts).toEqual([1, 1]);
  });

  it("an Idempotency-Key's row and the log commit together; a replay or a racing twin announces and writes nothing more", async () => {
    const w = await createWorkspace();
    await placeOn(w, "LOGS_1");
    const { sent, queue } = recordingQueue();
    const send = async () => {
      const ctx = createExecutionContext();
      const req = new Request("http://api.test/log-request", { method: "POST", headers: { "X-API-KEY": w.key, "Content-Type": "application/json", "Idempotency-Key": "once-only" }, body: JSON.stringify(BODY) });
      const res = await worker.fetch(req, { ...env, INDEX: queue }, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(201);
      return (await json(res)).id as number;
    };
    const ids = await Promise.all([send(), send(), send()]);
    const id = ids[0];
    expect(ids).toEqual([id, id, id]);
    expect(await send()).toBe(id);
    const state = await d1Named("LOGS_1")
      .prepare(
        `SELECT (SELECT count(*) FROM request_logs WHERE workspace_id = ?1) AS logs,
                (SELECT count(*) FROM request_logs WHERE workspace_id = ?1 AND id > (SELECT indexed_to FROM log_index_state)) AS waiting,
                (SELECT group_concat(request_log_id) FROM idempotency_keys WHERE workspace_id = ?1) AS keyed`,
      )
      .bind(w.workspaceId)
      .first();
    expect(state).toEqual({ logs: 1, waiting: 1, keyed: String(id) });
    expect(sent.flatMap((m) => m.ids)).toEqual([id]);
    await deliverAll(sent);
    expect(await searchIds(w, byTag("deferred"))).toEqual([id]);
  });
});
