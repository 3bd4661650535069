// Signals fed by the indexer: new logs matched against the workspace's enabled signals where they
// become searchable. The sample is exactly the deterministic draw (and within its binomial bounds), a
// redelivered index message judges nothing again, scopes and filters choose what is judged, a delay
// is kept, disabled signals judge nothing, and the cron's index sweep matches what no message brought.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { buildDeps } from "../../../src/deps";
import { getDb } from "../../../src/db/client";
import { placeWorkspace } from "../../../src/logs";
import { indexQuietly } from "../../../src/queue/scheduled";
import { isSampled, spendToday } from "../../../src/services/signals";
import { call, createWorkspace, json, logsDb, type TestKey } from "../../helpers/api";
import { judgedAmong, logAnswer, logMany, newSignal, owe, owedCount, resultsOf, SIGNALS, until, uniq } from "../../helpers/signals";
import { text } from "../../helpers/fixtures";

const totals = async (ws: TestKey, id: number) => (await json(await call(`${SIGNALS}/${id}`, { key: ws.key }))).signal.totals;

async function publish(ws: TestKey, name: string, labels: string[] = []) {
  const res = await call("/rest/prompt-templates", {
    method: "POST",
    key: ws.key,
    json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: text("hi") }] } }, release_labels: labels },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return json(res) as Promise<{ id: number; version: number }>;
}

/** Waits until the workspace's logs are indexed and every judgement they owed is made. */
async function settle(ws: TestKey, ids: number[]) {
  const d1 = await logsDb(ws);
  // Indexed: at most the watermark, and not one of the logs from before it still listed as waiting.
  const waiting = `SELECT count(*) AS n FROM json_each(?) AS j WHERE j.value > (SELECT indexed_to FROM log_index_state WHERE id = 1) OR j.value IN (SELECT request_id FROM request_log_unindexed)`;
  const started = Date.now();
  await until(async () => {
    if ((await d1.prepare(waiting).bind(JSON.stringify(ids)).first<{ n: number }>())!.n === 0) return true;
    // Past the index queue's batch wait (3 s), the cron's sweep indexes (and matches, with the same
    // matcher) what still waits, as deployed: the queue is shared with every test file running, so a
    // test need not wait its turn there.
    if (Date.now() - started > 3_000) await indexQuietly(buildDeps(env), Date.now() + 60_000);
    return false;
  }, "the logs indexed", 100_000);
  await until(async () => (await owedCount(ws)) === 0, "the judgements made", 100_000);
}

describe("signals fed by the indexer", () => {
  it("judges exactly the logs a 0.5 hook samples, within the binomial bounds, and nothing again on a redelivered index message", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true, hooks: [{ scope: "all", sample_rate: 0.5 }] });
    const ids = await logMany(ws, 200, (i) => `answer ${i} [[verdict:${i % 3 === 0}]]`);
    await settle(ws, ids);
    const expected = ids.filter((id) => isSampled(s.id, { hook: s.hooks[0].id }, id, 0.5)).sort((a, b) => a - b);
    // 200 draws at 0.5: within 4 standard deviations (±28) of 100.
    expect(Math.abs(expected.length - 100)).toBeLessThanOrEqual(28);
    expect(await judgedAmong(ws, s.id, ids)).toEqual(expected);
    // Search finds them by the signal's name and verdict.
    const verdictOf = new Map(ids.map((id, i) => [id, i % 3 === 0]));
    const found = async (operator: string) => {
      const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { filters: [{ field: "signals", nested_key: s.name, operator }] }, per_page: 100 } });
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(200);
      return { ids: body.items.map((i: { id: number }) => i.id).sort((a: number, b: number) => a - b), total: body.total };
    };
    expect((await found("is_true")).ids).toEqual(expected.filter((id) => verdictOf.get(id)));
    expect((await found("is_false")).total).toBe(expected.filter((id) => !verdictOf.get(id)).length);
    expect((await found("is_not_null")).total).toBe(expected.length);
    expect((await found("is_null")).total).toBe(ids.length - expected.length);
    const unknown = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { filters: [{ field: "signals", nested_key: "no such signal", operator: "is_null" }] } } });
    expect((await json(unknown)).total).toBe(ids.length);
    const before = await totals(ws, s.id);
    expect(before.processed).toBe(expected.length);
    // The index message delivered again: its logs are indexed, so nothing is matched or judged again.
    const shard = await placeWorkspace(getDb(env.DB), env, ws.workspaceId);
    const batch = createMessageBatch("promptedge-index", [{ id: "again", timestamp: new Date(), attempts: 2, body: { v: 1, kind: "index_logs", shard, ids } }]);
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, createExecutionContext())).explicitAcks).toEqual(["again"]);
    expect(await owedCount(ws)).toBe(0);
    expect(await totals(ws, s.id)).toEqual(before);
    expect((await spendToday(buildDeps(env).db, s.id, Date.now())).runs).toBe(expected.length);
  }, 240_000);

  it("judges only what a hook's scope and filters cover: a template's version, a release label's version, a tag", async () => {
    const ws = await createWorkspace();
    const a = await publish(ws, uniq("a"));
    const b = await publish(ws, uniq("b"), ["prod"]);
    // Version 2 of b, and prod still on version 1.
    await call(`/rest/prompt-templates`, { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: (await json(await call(`/prompt-templates/${b.id}`, { key: ws.key }))).prompt_name }, prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: text("v2") }] } } } });
    const version = await newSignal(ws, { enabled: true, hooks: [{ scope: "prompt_template", prompt_template_id: a.id, prompt_version_number: 1, sample_rate: 1 }] });
    const label = await newSignal(ws, { enabled: true, hooks: [{ scope: "release_label", release_label: "prod", sample_rate: 1 }] });
    const tagged = await newSignal(ws, { enabled: true, hooks: [{ scope: "all", sample_rate: 1, filters: { filters: [{ field: "tags", operator: "contains", value: "vip" }] } }] });
    const off = await newSignal(ws, { enabled: false, hooks: [{ scope: "all", sample_rate: 1 }] });
    const logs = {
      a1: await logAnswer(ws, "a1", { prompt_id: a.id, prompt_version_number: 1 }),
      b1: await logAnswer(ws, "b1", { prompt_id: b.id, prompt_version_number: 1, tags: ["vip"] }),
      b2: await logAnswer(ws, "b2", { prompt_id: b.id, prompt_version_number: 2 }),
      none: await logAnswer(ws, "none", { tags: ["other"] }),
    };
    await settle(ws, Object.values(logs));
    const judgedBy = async (id: number) => (await resultsOf(ws, id)).map((r) => r.signal_id).sort((x, y) => x - y);
    expect(await judgedBy(logs.a1)).toEqual([version.id]);
    expect(await judgedBy(logs.b1)).toEqual([label.id, tagged.id].sort((x, y) => x - y));
    expect(await judgedBy(logs.b2)).toEqual([]);
    expect(await judgedBy(logs.none)).toEqual([]);
    expect((await totals(ws, off.id)).processed).toBe(0);
  }, 240_000);

  it("judges a release label's traffic, whichever A/B variant served it, only one variant with ab_variant, and reports each signal's true-rate per variant in the scorecard", async () => {
    const ws = await createWorkspace();
    const name = uniq("ab");
    const t = await publish(ws, name, ["prod"]);
    await publish(ws, name);
    await publish(ws, name);
    const release = await call("/api/public/v2/ab-tests", {
      method: "POST",
      key: ws.key,
      json: { name: "tone", prompt_template_id: t.id, release_label: "prod", variants: [{ key: "base", prompt_version_number: 1, percentage: 50 }, { key: "challenger", prompt_version_number: 2, percentage: 50 }] },
    });
    expect(release.status, await release.clone().text()).toBe(201);
    const abTestId = (await json(release)).ab_test.id;
    const label = await newSignal(ws, { enabled: true, hooks: [{ scope: "release_label", release_label: "prod", sample_rate: 1 }] });
    const variant = await newSignal(ws, { enabled: true, hooks: [{ scope: "prompt_template", prompt_template_id: t.id, release_label: "prod", ab_variant: "challenger", sample_rate: 1 }] });
    // Versions 1 and 2 are the release's variants (known from the version alone); version 3 is not the label's traffic.
    const logs = {
      base: await logAnswer(ws, "[[verdict:true]]", { prompt_id: t.id, prompt_version_number: 1 }),
      challenger: await logAnswer(ws, "[[verdict:false]]", { prompt_id: t.id, prompt_version_number: 2 }),
      challenger2: await logAnswer(ws, "[[verdict:true]]", { prompt_id: t.id, prompt_version_number: 2 }),
      other: await logAnswer(ws, "[[verdict:true]]", { prompt_id: t.id, prompt_version_number: 3 }),
    };
    await settle(ws, Object.values(logs));
    const judgedBy = async (id: number) => (await resultsOf(ws, id)).map((r) => r.signal_id).sort((x, y) => x - y);
    expect(await judgedBy(logs.base)).toEqual([label.id]);
    expect(await judgedBy(logs.challenger)).toEqual([label.id, variant.id].sort((x, y) => x - y));
    expect(await judgedBy(logs.challenger2)).toEqual([label.id, variant.id].sort((x, y) => x - y));
    expect(await judgedBy(logs.other)).toEqual([]);
    const card = await json(await call(`/api/public/v2/ab-tests/${abTestId}/scorecard`, { key: ws.key }));
    const byKey = Object.fromEntries(card.variants.map((v: { key: string }) => [v.key, v]));
    expect(byKey.base.signals[label.name]).toMatchObject({ n: 1, true_rate: 1 });
    expect(byKey.challenger.signals[label.name]).toMatchObject({ n: 2, true_rate: 0.5 });
    expect(byKey.challenger.signals[label.name].ci95).toHaveLength(2);
    expect(byKey.challenger.signals[variant.name]).toMatchObject({ n: 2, true_rate: 0.5 });
    expect(byKey.base.signals[variant.name]).toMatchObject({ n: 0 });
    // A new revision's verdict replaces the old one in the scorecard too: counted once.
    await call(`${SIGNALS}/${label.id}`, { method: "PATCH", key: ws.key, json: { statement: "Is it polite?" } });
    await owe(ws, label.id, [logs.challenger, logs.challenger2]);
    await until(async () => (await owedCount(ws)) === 0, "the judgements made", 100_000);
    const again = await json(await call(`/api/public/v2/ab-tests/${abTestId}/scorecard`, { key: ws.key }));
    expect(again.variants.find((v: { key: string }) => v.key === "challenger").signals[label.name]).toMatchObject({ n: 2, true_rate: 0.5 });
    expect((await resultsOf(ws, logs.challenger)).find((r) => r.signal_id === label.id)).toMatchObject({ revision: 2 });
  }, 240_000);

  it("judges a log once per signal when several hooks match it, under the first hook that samples it", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true, hooks: [{ scope: "all", sample_rate: 0 }, { scope: "all", sample_rate: 1 }, { scope: "all", sample_rate: 1 }] });
    const ids = await logMany(ws, 6, (i) => `x ${i}`);
    await settle(ws, ids);
    for (const id of ids) expect(await resultsOf(ws, id)).toMatchObject([{ signal_id: s.id, hook_id: s.hooks[1].id }]);
  }, 240_000);

  it("matches a log that a dataset snapshot indexes before any index message reaches it", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true, hooks: [{ scope: "all", sample_rate: 1 }] });
    const tag = uniq("snap");
    // Its index message is lost: only the snapshot indexes it.
    const res = await worker.fetch(
      new Request("http://api.test/log-request", {
        method: "POST",
        headers: { "X-API-KEY": ws.key, "Content-Type": "application/json" },
        body: JSON.stringify({ provider: "openai", model: "gpt-4o", tags: [tag], input: { type: "chat", messages: [] }, output: { type: "chat", messages: [{ role: "assistant", content: text("[[verdict:true]]") }] }, request_start_time: "2025-01-01T00:00:00Z", request_end_time: "2025-01-01T00:00:01Z" }),
      }),
      { ...env, INDEX: { send: async () => {}, sendBatch: async () => {} } as unknown as Queue },
      createExecutionContext(),
    );
    const id = (await json(res)).id;
    const group = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("set") } }));
    const filled = await call("/api/public/v2/dataset-versions/from-filter-params", {
      method: "POST",
      key: ws.key,
      json: { dataset_group_id: group.dataset_group.id, filter_group: { filters: [{ field: "tags", operator: "contains", value: tag }] }, variables_to_parse: ["request_log_id"] },
    });
    expect(filled.status, await filled.clone().text()).toBe(201);
    await until(async () => (await resultsOf(ws, id)).length === 1, "the snapshot's log judged", 100_000);
    expect((await resultsOf(ws, id))[0]).toMatchObject({ signal_id: s.id, result: 1 });
  }, 240_000);

  it("owes the judgement for the signal's delay, and the cron's index sweep matches logs no message brought", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { enabled: true, delay_seconds: 600, hooks: [{ scope: "all", sample_rate: 1 }] });
    const deps = buildDeps(env);
    // A log whose index message is lost: written through the handler with an index queue that keeps nothing.
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("http://api.test/log-request", {
        method: "POST",
        headers: { "X-API-KEY": ws.key, "Content-Type": "application/json" },
        body: JSON.stringify({ provider: "openai", model: "gpt-4o", input: { type: "chat", messages: [] }, output: { type: "chat", messages: [{ role: "assistant", content: text("late") }] }, request_start_time: "2025-01-01T00:00:00Z", request_end_time: "2025-01-01T00:00:01Z" }),
      }),
      { ...env, INDEX: { send: async () => {}, sendBatch: async () => {} } as unknown as Queue },
      ctx,
    );
    const id = (await json(res)).id;
    const started = Date.now();
    await indexQuietly(deps, started + 60_000);
    const d1 = await logsDb(ws);
    const owed = await d1.prepare("SELECT not_before FROM signal_pending WHERE request_id = ? AND signal_id = ?").bind(id, s.id).first<{ not_before: number }>();
    expect(owed!.not_before).toBeGreaterThanOrEqual(started + 600_000);
    expect(await resultsOf(ws, id)).toEqual([]);
  });
});
