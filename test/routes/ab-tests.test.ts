// A/B releases end to end through the Worker: the ab-tests resource and its rules, fetches by label
// served through a running release (sticky or random, the answer's ab_test and X-PromptEdge-AB, a
// pinned version untouched, answers byte-identical without a release), logs recording the variant,
// search and analytics on it, the scorecard from rollups, guardrails acting once, protected labels'
// approvals, AB_TEST folder entities with external IDs, and workspace isolation on every route.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { buildDeps } from "../../src/deps";
import { abTotals, rollupAbLogs, WorkspaceLogs } from "../../src/logs";
import { scorecardOf } from "../../src/services/releases";
import { assignmentKeys, runGuardrails } from "../../src/services/releases";
import { call, createWorkspace, json, logsDb, scopedKey, type TestKey } from "../helpers/api";
import { AB, completion, publish, uniq } from "../helpers/releases";
import { indexNow } from "../helpers/logs";
import { hexOf, llm, sendSpans, str } from "../helpers/otlp";

let ws: TestKey;
let other: TestKey;

/** A template with versions v1..v3 and `prod` on v1. */
async function template(key = ws.key) {
  const name = uniq("ab");
  const first = await publish(key, name, "v1", ["prod"]);
  await publish(key, name, "v2");
  await publish(key, name, "v3");
  return { name, id: first.id as number };
}

const release = (t: { id: number }, extra: Record<string, unknown> = {}) => ({
  name: "tone test",
  prompt_template_id: t.id,
  release_label: "prod",
  assignment_key: "user_id",
  variants: [
    { key: "base", prompt_version_number: 1, percentage: 90 },
    { key: "challenger", prompt_version_number: 2, percentage: 10 },
  ],
  ...extra,
});

async function create(body: Record<string, unknown>, key = ws.key) {
  const res = await call(AB, { method: "POST", key, json: body });
  return { status: res.status, body: await json(res) };
}

const fetchPost = (key: string, name: string, body: Record<string, unknown>) => call(`/prompt-templates/${encodeURIComponent(name)}`, { method: "POST", key, json: body });

async function countAb(table: string, where: string, ...binds: unknown[]) {
  return (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).bind(...binds).first<{ n: number }>())!.n;
}

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

describe("the ab-tests resource", () => {
  it("creates a release (201) with its split, lists and reads it; its rules are 400s naming the field, and nothing is stored", async () => {
    const t = await template();
    const before = await countAb("ab_tests", "workspace_id = ?", ws.workspaceId);
    const bad: [Record<string, unknown>, RegExp][] = [
      [release(t, { variants: [{ key: "base", prompt_version_number: 1, percentage: 90 }, { key: "c", prompt_version_number: 2, percentage: 5 }] }), /^variants: percentages must sum to 100/],
      [release(t, { variants: [{ key: "a", prompt_version_number: 2, percentage: 90 }, { key: "c", prompt_version_number: 3, percentage: 10 }] }), /^variants: one variant must be the base, the label's current version 1/],
      [release(t, { variants: [{ key: "base", prompt_version_number: 1, percentage: 90 }, { key: "c", prompt_version_number: 9, percentage: 10 }] }), /^variants\[1\]\.prompt_version_number: .* has no version 9/],
      [release(t, { release_label: "nope" }), /^release_label: .* has no release label "nope"/],
      [release(t, { variants: [{ key: "base", prompt_version_number: 1, percentage: 100 }] }), /^variants: at least 2 variants/],
      [release(t, { variants: [{ key: "b a", prompt_version_number: 1, percentage: 90 }, { key: "c", prompt_version_number: 2, percentage: 10 }] }), /^variants\[0\]\.key: must be 1 to 64 letters/],
      [release(t, { guardrails: { metrics: [{ type: "score" }] } }), /^guardrails\.metrics\[0\]\.name/],
      [release(t, { segments: [{ name: "s", conditions: [{ key: "plan", operator: "in", value: "free" }], variants: [{ key: "base", percentage: 100 }] }] }), /^segments\[0\]\.conditions\[0\]\.value: must be a list/],
    ];
    for (const [body, message] of bad) {
      const res = await create(body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: "validation_error" });
      expect(res.body.message).toMatch(message);
    }
    expect((await create(release({ id: 99_999_999 }))).status).toBe(404);
    expect(await countAb("ab_tests", "workspace_id = ?", ws.workspaceId)).toBe(before);

    const made = await create(release(t, { external_ids: [{ source: "jira", external_id: `AI-${t.id}` }] }));
    expect(made.status).toBe(201);
    expect(made.body.ab_test).toMatchObject({
      prompt_template_id: t.id,
      prompt_name: t.name,
      release_label: "prod",
      status: "running",
      revision: 1,
      base: "base",
      variants: [
        { key: "base", prompt_version_number: 1, percentage: 90, is_base: true, ranges: [[1000, 10000]] },
        { key: "challenger", prompt_version_number: 2, percentage: 10, is_base: false, ranges: [[0, 1000]] },
      ],
      external_ids: [{ source: "jira", external_id: `AI-${t.id}` }],
    });
    const id = made.body.ab_test.id;
    // A second running release on the same template and label: 409.
    const again = await create(release(t));
    expect(again.status).toBe(409);
    expect(again.body.message).toContain(`A/B release ${id}`);
    expect((await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test.id).toBe(id);
    const list = await json(await call(`${AB}?prompt_template_id=${t.id}&status=running`, { key: ws.key }));
    expect(list.ab_tests.map((r: { id: number }) => r.id)).toEqual([id]);
    expect((await json(await call(`${AB}?external_source=jira&external_id=AI-${t.id}`, { key: ws.key }))).ab_tests.map((r: { id: number }) => r.id)).toEqual([id]);
    expect((await json(await call(`${AB}?created_by_email=${encodeURIComponent(ws.email)}&name=tone`, { key: ws.key }))).total).toBeGreaterThanOrEqual(1);
    expect((await call(`${AB}?external_source=jira`, { key: ws.key })).status).toBe(400);
    // The trail and the webhook outbox.
    const events = await json(await call(`${AB}/${id}/events`, { key: ws.key }));
    expect(events.events.map((e: { action: string }) => e.action)).toEqual(["created"]);
    expect(await countAb("webhook_events", "workspace_id = ? AND event_type = 'ab_test_created' AND json_extract(details, '$.ab_test_id') = ?", ws.workspaceId, id)).toBe(1);
  });

  it("ramps move only base units and move the revision on; pause serves the label's own version; completed releases refuse changes", async () => {
    const t = await template();
    const id = (await create(release(t))).body.ab_test.id;
    const ramp = await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: { variants: [{ key: "challenger", percentage: 25 }, { key: "base", percentage: 75 }] } });
    expect(ramp.status).toBe(200);
    const ramped = (await json(ramp)).ab_test;
    expect(ramped.revision).toBe(2);
    expect(ramped.variants.find((v: { key: string }) => v.key === "challenger").ranges).toEqual([[0, 2500]]);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: { variants: [{ key: "challenger", percentage: 30 }] } })).status).toBe(400);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: { salt: "new" } })).status).toBe(400);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: {} })).status).toBe(400);
    const paused = await json(await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: { status: "paused" } }));
    expect(paused.ab_test).toMatchObject({ status: "paused", revision: 3 });
    const served = await json(await fetchPost(ws.key, t.name, { label: "prod", metadata_filters: { user_id: "u1" } }));
    expect(served.version).toBe(1);
    expect(served.ab_test).toBeUndefined();
    await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: { status: "running" } });
    const rolled = await call(`${AB}/${id}/rollback`, { method: "POST", key: ws.key });
    expect(rolled.status).toBe(200);
    expect((await json(rolled)).ab_test).toMatchObject({ status: "completed", outcome: "rolled_back", variants: [{ key: "base", percentage: 100 }, { key: "challenger", percentage: 0 }] });
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: { status: "running" } })).status).toBe(409);
    expect((await call(`${AB}/${id}/rollback`, { method: "POST", key: ws.key })).status).toBe(409);
    const trail = (await json(await call(`${AB}/${id}/events`, { key: ws.key }))).events.map((e: { action: string }) => e.action);
    expect(trail).toEqual(["rolled_back", "resumed", "paused", "updated", "created"]);
    expect(await countAb("webhook_events", "workspace_id = ? AND event_type = 'ab_test_rolled_back' AND json_extract(details, '$.ab_test_id') = ?", ws.workspaceId, id)).toBe(1);
  });
});

describe("fetching through a release", () => {
  it("serves the assigned version, sticky per unit, with ab_test and X-PromptEdge-AB; random without the key; a pinned version never goes through it", async () => {
    const t = await template();
    const id = (await create(release(t))).body.ab_test.id;
    const seen = new Map<string, number>();
    let challenger = 0;
    for (let u = 0; u < 60; u++) {
      const res = await fetchPost(ws.key, t.name, { prompt_release_label: "prod", metadata_filters: { user_id: `user-${u}` } });
      const body = await json(res);
      expect(body.ab_test).toMatchObject({ id, revision: 1, release_label: "prod", segment: null, assignment: "sticky" });
      expect(body.version).toBe(body.ab_test.variant === "challenger" ? 2 : 1);
      expect(body.prompt_template.content[0].text).toBe(`v${body.version}`);
      expect(res.headers.get("X-PromptEdge-AB")).toBe(`${id};${body.ab_test.variant};r1;sticky`);
      seen.set(`user-${u}`, body.version);
      if (body.version === 2) challenger++;
    }
    expect(challenger).toBeGreaterThan(0);
    for (const [user, version] of [...seen].slice(0, 10)) {
      expect((await json(await fetchPost(ws.key, t.name, { label: "prod", metadata_filters: { user_id: user } }))).version).toBe(version);
      const viaGet = await json(await call(`/prompt-templates/${t.name}?label=prod&metadata_filters[user_id]=${user}`, { key: ws.key }));
      expect(viaGet.version).toBe(version);
    }
    const random = await json(await call(`/prompt-templates/${t.name}?label=prod`, { key: ws.key }));
    expect(random.ab_test.assignment).toBe("random");
    // The assignment endpoint agrees with the fetch.
    const [user, version] = [...seen][0];
    const a = await json(await call(`${AB}/${id}/assignment?metadata_filters[user_id]=${user}`, { key: ws.key }));
    expect(a).toMatchObject({ ab_test_id: id, prompt_version_number: version, assignment: "sticky", serving: true });
    // Pinned versions and the latest never go through the release.
    const pinned = await fetchPost(ws.key, t.name, { version: 1, metadata_filters: { user_id: user } });
    expect((await json(pinned)).ab_test).toBeUndefined();
    expect(pinned.headers.get("X-PromptEdge-AB")).toBeNull();
    expect((await json(await fetchPost(ws.key, t.name, { metadata_filters: { user_id: user } }))).version).toBe(3);
    expect((await fetchPost(ws.key, t.name, { label: "prod", prompt_release_label: "other" })).status).toBe(400);
  });

  it("answers byte for byte as before when no release runs, and again after DELETE (the label reverts, not moved)", async () => {
    const t = await template();
    const ask = async () => {
      const res = await fetchPost(ws.key, t.name, { label: "prod", metadata_filters: { user_id: "u7" }, input_variables: {} });
      return { text: await res.text(), ab: res.headers.get("X-PromptEdge-AB") };
    };
    const before = await ask();
    expect(before.ab).toBeNull();
    const id = (await create(release(t, { variants: [{ key: "base", prompt_version_number: 1, percentage: 0 }, { key: "challenger", prompt_version_number: 3, percentage: 100 }] }))).body.ab_test.id;
    expect(JSON.parse((await ask()).text).version).toBe(3);
    expect((await call(`${AB}/${id}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    const after = await ask();
    expect(after).toEqual(before);
    expect((await call(`${AB}/${id}`, { key: ws.key })).status).toBe(404);
    const labels = await json(await call(`/prompt-templates/${t.name}/labels`, { key: ws.key }));
    expect(labels.release_labels).toMatchObject([{ release_label: "prod", prompt_version_number: 1 }]);
    expect(await countAb("webhook_events", "workspace_id = ? AND event_type = 'ab_test_deleted' AND json_extract(details, '$.ab_test_id') = ?", ws.workspaceId, id)).toBe(1);
  });

  it("from the edge cache: the release travels with the label's cached read, and every release change purges it as a publish does", async () => {
    const t = await template();
    const get = async (q = "") => {
      const res = await call(`/prompt-templates/${t.name}?label=prod${q}`, { key: ws.key });
      return { state: res.headers.get("X-PromptEdge-Cache"), body: await json(res) };
    };
    await get();
    expect((await get()).state).toBe("hit");
    const id = (await create(release(t, { variants: [{ key: "base", prompt_version_number: 1, percentage: 0 }, { key: "challenger", prompt_version_number: 3, percentage: 100 }] }))).body.ab_test.id;
    const through = await get();
    expect(through).toMatchObject({ state: "miss", body: { version: 3, ab_test: { id, variant: "challenger" } } });
    // Cached with its release: a hit assigns per request from the entry (the challenger's read included).
    expect(await get("&metadata_filters[user_id]=z")).toMatchObject({ state: "hit", body: { version: 3, ab_test: { assignment: "sticky" } } });
    await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: { variants: [{ key: "base", percentage: 100 }, { key: "challenger", percentage: 0 }] } });
    expect(await get()).toMatchObject({ state: "miss", body: { version: 1, ab_test: { revision: 2, variant: "base" } } });
    await call(`${AB}/${id}`, { method: "DELETE", key: ws.key });
    const after = await get();
    expect(after.state).toBe("miss");
    expect(after.body.ab_test).toBeUndefined();
  });

  it("segments: the first whose conditions hold uses its own split", async () => {
    const t = await template();
    await create(
      release(t, {
        segments: [{ name: "internal", conditions: [{ key: "company", operator: "is", value: "acme" }], variants: [{ key: "challenger", percentage: 100 }] }],
      }),
    );
    const body = await json(await fetchPost(ws.key, t.name, { label: "prod", metadata_filters: { user_id: "x", company: "acme" } }));
    expect(body).toMatchObject({ version: 2, ab_test: { segment: "internal", variant: "challenger" } });
  });
});

describe("logs, search, analytics and the scorecard", () => {
  it("a log of a template version served by a release records its variant; search, analytics and the scorecard read it", async () => {
    const t = await template();
    const id = (await create(release(t, { variants: [{ key: "base", prompt_version_number: 1, percentage: 50 }, { key: "challenger", prompt_version_number: 2, percentage: 50 }] }))).body.ab_test.id;
    const logged: { id: number; variant: string }[] = [];
    for (let u = 0; u < 12; u++) {
      const served = await json(await fetchPost(ws.key, t.name, { label: "prod", metadata_filters: { user_id: `u${u}` } }));
      const res = await call("/log-request", {
        method: "POST",
        key: ws.key,
        json: {
          provider: "openai",
          model: "gpt-4o",
          input: { type: "chat", messages: [] },
          output: { type: "chat", messages: [] },
          request_start_time: "2026-01-01T00:00:00Z",
          request_end_time: "2026-01-01T00:00:01Z",
          prompt_id: t.id,
          prompt_version_number: served.version,
          metadata: { user_id: `u${u}` },
          score: u % 2 === 0 ? 80 : 60,
          status: u === 0 ? "ERROR" : "SUCCESS",
          price: 0.01,
        },
      });
      expect(res.status).toBe(201);
      logged.push({ id: (await json(res)).id, variant: served.ab_test.variant });
    }
    // A log with no unit and the challenger's version: known by its version alone.
    const inferred = await json(
      await call("/log-request", { method: "POST", key: ws.key, json: { provider: "openai", model: "m", input: { type: "chat", messages: [] }, output: { type: "chat", messages: [] }, request_start_time: 1, request_end_time: 2, prompt_id: t.id, prompt_version_number: 2 } }),
    );
    const view = await json(await call(`/api/public/v2/requests/${logged[0].id}`, { key: ws.key }));
    expect(view).toMatchObject({ ab_test_id: id, ab_variant: logged[0].variant, ab_assignment: "sticky", prompt_version_number: logged[0].variant === "challenger" ? 2 : 1 });
    expect(await json(await call(`/api/public/v2/requests/${inferred.id}`, { key: ws.key }))).toMatchObject({ ab_test_id: id, ab_variant: "challenger", ab_assignment: "inferred" });

    const logs = getDb(await logsDb(ws));
    await indexNow();
    await rollupAbLogs(logs, (ids) => assignmentKeys(getDb(env.DB), ids));
    const search = async (filters: unknown[]) =>
      json(await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { logic: "AND", filters }, per_page: 100 } }));
    const challengers = logged.filter((l) => l.variant === "challenger").length + 1;
    const found = await search([{ field: "ab_test_id", operator: "is", value: id }, { field: "ab_variant", operator: "is", value: "challenger" }]);
    expect(found.total).toBe(challengers);
    expect(found.items.map((i: { id: number }) => i.id).sort()).toEqual([...logged.filter((l) => l.variant === "challenger").map((l) => l.id), inferred.id].sort());

    const analytics = await json(
      await call("/api/public/v2/requests/analytics/custom-analytics", {
        method: "POST",
        key: ws.key,
        json: { filter_group: { logic: "AND", filters: [{ field: "ab_test_id", operator: "is", value: id }] }, customCharts: [{ id: "c", chartType: "bar", metric: "count", groupByField: "ab_variant" }] },
      }),
    );
    expect(analytics.customCharts, JSON.stringify(analytics)).toBeDefined();
    expect(JSON.stringify(analytics.customCharts[0])).toContain("challenger");

    const card = await json(await call(`${AB}/${id}/scorecard`, { key: ws.key }));
    const byKey = Object.fromEntries(card.variants.map((v: { key: string }) => [v.key, v]));
    expect(byKey.challenger.requests).toBe(challengers);
    expect(byKey.base.requests + byKey.challenger.requests).toBe(13);
    expect(byKey.challenger.units).toBe(challengers - 1);
    expect(byKey.base.scores.default.n + byKey.challenger.scores.default.n).toBe(12);
    expect(byKey.base.scores.default.ci95).toHaveLength(2);
    expect(card.variants.find((v: { is_base: boolean }) => !v.is_base).scores.default).toHaveProperty("p_value");
    expect(byKey[logged[0].variant].errors).toBe(1);
    // A score tracked after the rollup moves it.
    await call("/rest/track-score", { method: "POST", key: ws.key, json: { request_id: inferred.id, score: 100 } });
    const after = await json(await call(`${AB}/${id}/scorecard`, { key: ws.key }));
    const c2 = after.variants.find((v: { key: string }) => v.key === "challenger");
    expect(c2.scores.default.n).toBe(byKey.challenger.scores.default.n + 1);
  });
});

describe("OTLP spans", () => {
  it("a span naming the template's version and carrying the unit in promptlayer.metadata makes a log that records its variant", async () => {
    const t = await template();
    const id = (await create(release(t))).body.ab_test.id;
    const a = await json(await call(`${AB}/${id}/assignment?metadata_filters[user_id]=span-user`, { key: ws.key }));
    const traceId = hexOf(32);
    await sendSpans(ws, traceId, Date.now(), [
      {
        id: hexOf(16),
        name: "chat",
        start: 0,
        end: 10,
        attrs: [...llm("gpt-4o", "openai", 3, 4), str("promptlayer.prompt.name", t.name), str("promptlayer.prompt.version", String(a.prompt_version_number)), str("promptlayer.metadata.user_id", "span-user")],
      },
    ]);
    await indexNow();
    const found = await json(await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { logic: "AND", filters: [{ field: "trace_id", operator: "is", value: traceId }] } } }));
    expect(found.items).toHaveLength(1);
    const log = await json(await call(`/api/public/v2/requests/${found.items[0].id}`, { key: ws.key }));
    expect(log).toMatchObject({ ab_test_id: id, ab_variant: a.variant, ab_assignment: "sticky", prompt_version_number: a.prompt_version_number });
  });
});

describe("the scorecard over several log databases", () => {
  it("sums every log database of the workspace (a workspace whose logs moved on to a new period) and no other workspace's rows", async () => {
    const [wsId, testId] = [900_000 + Math.floor(Math.random() * 99_999), 7_000_000 + Math.floor(Math.random() * 99_999)];
    const put = (d1: D1Database, w: number, variant: string, requests: number, errors: number, score: number) =>
      d1.batch([
        d1.prepare("INSERT INTO ab_variant_daily (workspace_id, ab_test_id, variant, day, bucket, requests, errors, cost, latency_ms) VALUES (?, ?, ?, 0, 40, ?, ?, ?, ?)").bind(w, testId, variant, requests, errors, requests * 0.01, requests * 300),
        d1.prepare("INSERT INTO ab_variant_metrics (workspace_id, ab_test_id, variant, day, kind, name, n, sum, sum_sq) VALUES (?, ?, ?, 0, 'score', 'default', ?, ?, ?)").bind(w, testId, variant, requests, requests * score, requests * score * score),
        d1.prepare("INSERT INTO ab_units (workspace_id, ab_test_id, variant, unit) VALUES (?, ?, ?, ?)").bind(w, testId, variant, `${variant}-${requests}`),
      ]);
    await put(env.LOGS_0, wsId, "base", 30, 3, 70);
    await put(env.LOGS_1, wsId, "base", 20, 2, 70);
    await put(env.LOGS_1, wsId, "challenger", 40, 0, 90);
    await put(env.LOGS_1, wsId + 1, "challenger", 1000, 0, 10);
    const logs = new WorkspaceLogs(wsId, [
      { shard: "LOGS_0", db: getDb(env.LOGS_0), range: 1 },
      { shard: "LOGS_1", db: getDb(env.LOGS_1), range: 2 },
    ]);
    const split = { base: "base", versions: { base: 1, challenger: 2 }, shares: [{ key: "base", ranges: [[1000, 10000]] as [number, number][] }, { key: "challenger", ranges: [[0, 1000]] as [number, number][] }], segments: [] };
    const card = scorecardOf({ id: testId, split }, await abTotals(logs, wsId, testId), { from: null, to: null });
    const [base, challenger] = card.variants;
    expect(base).toMatchObject({ requests: 50, errors: 5, error_rate: 0.1, units: 2, scores: { default: { n: 50, mean: 70 } } });
    expect(challenger).toMatchObject({ requests: 40, errors: 0, units: 1, scores: { default: { n: 40, mean: 90, delta_vs_base: 20 } } });
    expect(challenger.cost_per_request).toBeCloseTo(0.01, 9);
    expect(challenger.error_rate_p_value).toBeLessThan(0.05);
  });
});

describe("guardrails", () => {
  async function logFor(t: { id: number }, version: number, status: string, n: number) {
    // Each log its own start time: a byte-identical body may be taken for a retry and stored once.
    await Promise.all(Array.from({ length: n }, (_, i) =>
      call("/log-request", {
        method: "POST",
        key: ws.key,
        json: { provider: "openai", model: "m", input: { type: "chat", messages: [] }, output: { type: "chat", messages: [] }, request_start_time: 1_767_225_600_000 + i, request_end_time: 1_767_225_600_500, prompt_id: t.id, prompt_version_number: version, status, ...(status === "ERROR" ? { error_type: "PROVIDER_ERROR" } : {}) },
      }),
    ));
  }
  const guardrails = { min_duration_hours: 0, min_samples_per_variant: 10, metrics: [{ type: "error_rate", max_regression: 0.05 }], on_success: "promote" };
  const evaluate = async () => {
    await rollupAbLogs(getDb(await logsDb(ws)), (ids) => assignmentKeys(getDb(env.DB), ids));
    // Far enough on that every release is due, however recently another test evaluated it.
    return runGuardrails(getDb(env.DB), (w) => buildDeps(env).logs(w), Date.now() + 3_600_000 * 24 * 30);
  };

  it("a regressing challenger is rolled back exactly once, the label untouched", async () => {
    const t = await template();
    const id = (await create(release(t, { guardrails }))).body.ab_test.id;
    await logFor(t, 1, "SUCCESS", 12);
    await logFor(t, 2, "ERROR", 12);
    await evaluate();
    await evaluate();
    const r = (await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test;
    expect(r).toMatchObject({ status: "completed", outcome: "rolled_back" });
    const events = (await json(await call(`${AB}/${id}/events`, { key: ws.key }))).events;
    expect(events.filter((e: { action: string }) => e.action === "rolled_back")).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: "guardrail", details: { variant: "challenger", metric: "error_rate" } });
    expect(await countAb("webhook_events", "workspace_id = ? AND event_type = 'ab_test_rolled_back' AND json_extract(details, '$.ab_test_id') = ?", ws.workspaceId, id)).toBe(1);
    expect(await countAb("webhook_events", "workspace_id = ? AND event_type = 'prompt_template_label_moved' AND json_extract(details, '$.prompt_template_id') = ?", ws.workspaceId, t.id)).toBe(0);
    expect((await json(await call(`/prompt-templates/${t.name}/labels`, { key: ws.key }))).release_labels[0].prompt_version_number).toBe(1);
    // In the audit log once, with no key: the guardrails acted.
    const audit = (await json(await call(`/api/public/v2/audit-log?action=ab_test.rolled_back&target_id=${id}`, { key: ws.key }))).items;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ target_type: "ab_test", api_key_id: null, details: { ab_test_id: id, reason: "guardrail" } });
  });

  it("a winning challenger is promoted with exactly one prompt_template_label_moved; a retried run acts no more", async () => {
    const t = await template();
    const id = (await create(release(t, { guardrails }))).body.ab_test.id;
    await logFor(t, 1, "SUCCESS", 12);
    await logFor(t, 2, "SUCCESS", 12);
    await evaluate();
    await evaluate();
    expect((await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test).toMatchObject({ status: "completed", outcome: "promoted", promoted_variant: "challenger" });
    expect(await countAb("webhook_events", "workspace_id = ? AND event_type = 'prompt_template_label_moved' AND json_extract(details, '$.prompt_template_id') = ?", ws.workspaceId, t.id)).toBe(1);
    expect(await countAb("ab_test_events", "ab_test_id = ? AND action = 'promoted'", id)).toBe(1);
    expect((await json(await call(`/prompt-templates/${t.name}/labels`, { key: ws.key }))).release_labels[0].prompt_version_number).toBe(2);
  });

  it("a challenger that clears its metrics is ramped to the next step, once, the revision moving on", async () => {
    const t = await template();
    const id = (await create(release(t, { guardrails: { ...guardrails, on_success: "ramp", ramp: { steps: [25, 50, 100], every_hours: 0 } } }))).body.ab_test.id;
    await logFor(t, 1, "SUCCESS", 12);
    await logFor(t, 2, "SUCCESS", 12);
    await evaluate();
    const r = (await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test;
    expect(r).toMatchObject({ status: "running", revision: 2, variants: [{ key: "base", percentage: 75 }, { key: "challenger", percentage: 25 }] });
    const events = (await json(await call(`${AB}/${id}/events`, { key: ws.key }))).events;
    expect(events.filter((e: { action: string }) => e.action === "ramped")).toHaveLength(1);
    expect(await countAb("webhook_events", "workspace_id = ? AND event_type = 'ab_test_updated' AND json_extract(details, '$.ab_test_id') = ?", ws.workspaceId, id)).toBe(1);
  });

  it("on a protected label the promote asks for approval: deny lets it run, approve moves the label and completes it", async () => {
    const t = await template();
    const labelId = (await json(await call(`/prompt-templates/${t.name}/labels`, { key: ws.key }))).release_labels[0].release_label_id;
    const prot = await call(`/api/public/v2/prompt-labels/${labelId}/protection`, { method: "PUT", key: ws.key, json: { protected: true } });
    expect((await json(prot)).protected).toBe(true);
    // By hand: the label unmoved with a pending request (200, PromptLayer's code), a second is a 409, deleting the label a 409, a publish naming it a 409.
    const byHand = await call(`/prompt-labels/${labelId}`, { method: "PATCH", key: ws.key, json: { prompt_version_number: 3 } });
    expect(byHand.status).toBe(200);
    const unmoved = await json(byHand);
    expect(unmoved).toMatchObject({ id: labelId, protected: true, prompt_version_number: 1 });
    const manual = unmoved.change_request;
    expect(manual).toMatchObject({ status: "pending", prompt_version_number: 3, old_prompt_version_number: 1, change_type: "move" });
    expect((await call(`/prompt-labels/${labelId}`, { method: "PATCH", key: ws.key, json: { prompt_version_number: 2 } })).status).toBe(409);
    expect((await call(`/prompt-labels/${labelId}`, { method: "DELETE", key: ws.key })).status).toBe(409);
    const pub = await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: t.name }, prompt_version: { prompt_template: completion("v4") }, release_labels: ["prod"] } });
    expect(pub.status).toBe(409);
    const denied = await call(`/api/public/v2/label-change-requests/${manual.id}/deny`, { method: "POST", key: ws.key });
    expect((await json(denied)).change_request.status).toBe("denied");
    expect((await call(`/api/public/v2/label-change-requests/${manual.id}/approve`, { method: "POST", key: ws.key })).status).toBe(409);

    const id = (await create(release(t, { guardrails }))).body.ab_test.id;
    await logFor(t, 1, "SUCCESS", 12);
    await logFor(t, 2, "SUCCESS", 12);
    await evaluate();
    const waiting = (await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test;
    expect(waiting.status).toBe("running");
    expect(waiting.pending_change_request_id).toEqual(expect.any(Number));
    expect(await countAb("webhook_events", "workspace_id = ? AND event_type = 'prompt_template_label_change_requested' AND json_extract(details, '$.prompt_template_id') = ?", ws.workspaceId, t.id)).toBe(2);
    // Deny: the release runs on, waiting on nothing.
    await call(`/api/public/v2/label-change-requests/${waiting.pending_change_request_id}/deny`, { method: "POST", key: ws.key });
    expect((await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test).toMatchObject({ status: "running", pending_change_request_id: null });
    // By hand now: a promote asks again; approving moves the label and completes the release.
    const asked = await call(`${AB}/${id}/promote`, { method: "POST", key: ws.key, json: { variant: "challenger" } });
    expect(asked.status).toBe(202);
    const cr = (await json(asked)).change_request;
    const approved = await call(`/api/public/v2/label-change-requests/${cr.id}/approve`, { method: "POST", key: ws.key });
    expect((await json(approved)).change_request.status).toBe("approved");
    expect((await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test).toMatchObject({ status: "completed", outcome: "promoted", promoted_variant: "challenger" });
    expect((await json(await call(`/prompt-templates/${t.name}/labels`, { key: ws.key }))).release_labels[0].prompt_version_number).toBe(2);
    const types = (await env.DB.prepare("SELECT event_type FROM webhook_events WHERE workspace_id = ? AND json_extract(details, '$.prompt_template_id') = ? ORDER BY created_at").bind(ws.workspaceId, t.id).all<{ event_type: string }>()).results.map((r) => r.event_type);
    expect(types.filter((x) => x.startsWith("prompt_template_label_change"))).toEqual([
      "prompt_template_label_change_requested",
      "prompt_template_label_change_denied",
      "prompt_template_label_change_requested",
      "prompt_template_label_change_denied",
      "prompt_template_label_change_requested",
      "prompt_template_label_change_approved",
    ]);
    expect(types.filter((x) => x === "prompt_template_label_moved")).toHaveLength(1);
  });
});

describe("AB_TEST folder entities and isolation", () => {
  it("a release lives in a folder, is listed, moved and deleted through folder entities, with its external IDs", async () => {
    const t = await template();
    const folder = await json(await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: uniq("rel") } }));
    const id = (await create(release(t, { folder_id: folder.folder.id }))).body.ab_test.id;
    const listed = await json(await call(`/api/public/v2/folders/entities?folder_id=${folder.folder.id}&filter_type=AB_TEST&include_metadata=true`, { key: ws.key }));
    expect(listed.entities).toMatchObject([{ id, type: "AB_TEST", name: "tone test", metadata: { prompt_template_id: t.id, release_label: "prod" } }]);
    expect((await call(`${AB}/${id}/external-ids`, { method: "POST", key: ws.key, json: { source: "linear", external_id: `L-${id}` } })).status).toBe(201);
    expect((await json(await call(`${AB}/${id}/external-ids`, { key: ws.key }))).external_ids).toEqual([{ source: "linear", external_id: `L-${id}` }]);
    const moved = await call("/api/public/v2/folders/entities", { method: "POST", key: ws.key, json: { folder_id: null, entities: [{ id, type: "AB_TEST" }] } });
    expect(moved.status, await moved.clone().text()).toBe(200);
    expect((await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test.folder_id).toBeNull();
    const del = await call("/api/public/v2/folders/entities", { method: "DELETE", key: ws.key, json: { entities: [{ id, type: "AB_TEST" }] } });
    expect(del.status, await del.clone().text()).toBe(200);
    expect((await call(`${AB}/${id}`, { key: ws.key })).status).toBe(404);
    expect((await json(await fetchPost(ws.key, t.name, { label: "prod", metadata_filters: { user_id: "u" } }))).ab_test).toBeUndefined();
  });

  it("another workspace's release, its assignment, scorecard, events and every action are 404s; its template is not theirs to release", async () => {
    const t = await template();
    const id = (await create(release(t))).body.ab_test.id;
    // An external ID the owner attached, for the detach below to have something to refuse.
    expect((await call(`${AB}/${id}/external-ids`, { method: "POST", key: ws.key, json: { source: "linear", external_id: `OWN-${id}` } })).status).toBe(201);
    for (const [method, path, body] of [
      ["GET", `${AB}/${id}`],
      ["PATCH", `${AB}/${id}`, { status: "paused" }],
      ["DELETE", `${AB}/${id}`],
      ["POST", `${AB}/${id}/promote`, { variant: "challenger" }],
      ["POST", `${AB}/${id}/rollback`],
      ["GET", `${AB}/${id}/assignment?metadata_filters[user_id]=u`],
      ["GET", `${AB}/${id}/scorecard`],
      ["GET", `${AB}/${id}/events`],
      ["GET", `${AB}/${id}/external-ids`],
      ["POST", `${AB}/${id}/external-ids`, { source: "linear", external_id: `THEIRS-${id}` }],
      ["DELETE", `${AB}/${id}/external-ids/linear/OWN-${id}`],
    ] as [string, string, unknown?][]) {
      const res = await call(path, { method, key: other.key, ...(body ? { json: body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    // Folder entities take a release's id in the body: another workspace can neither move nor delete it.
    for (const [method, body] of [
      ["POST", { folder_id: null, entities: [{ id, type: "AB_TEST" }] }],
      ["DELETE", { entities: [{ id, type: "AB_TEST" }] }],
    ] as [string, unknown][]) {
      const res = await call("/api/public/v2/folders/entities", { method, key: other.key, json: body });
      expect(res.status, `${method} /api/public/v2/folders/entities ${await res.clone().text()}`).toBe(404);
    }
    // Neither the attach nor the detach reached the owner's release.
    expect((await json(await call(`${AB}/${id}/external-ids`, { key: ws.key }))).external_ids).toEqual([{ source: "linear", external_id: `OWN-${id}` }]);
    // The same detach is the owner's to make.
    expect((await call(`${AB}/${id}/external-ids/linear/OWN-${id}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    expect((await json(await call(`${AB}/${id}/external-ids`, { key: ws.key }))).external_ids).toEqual([]);
    expect((await create(release(t), other.key)).status).toBe(404);
    // A protected label's protection and change requests are the workspace's own too.
    const labelId = (await json(await call(`/prompt-templates/${t.name}/labels`, { key: ws.key }))).release_labels[0].release_label_id;
    expect((await call(`/api/public/v2/prompt-labels/${labelId}/protection`, { method: "PUT", key: other.key, json: { protected: true } })).status).toBe(404);
    await call(`/api/public/v2/prompt-labels/${labelId}/protection`, { method: "PUT", key: ws.key, json: { protected: true } });
    const asked = await json(await call(`${AB}/${id}/promote`, { method: "POST", key: ws.key, json: { variant: "challenger" } }));
    const cr = `/api/public/v2/label-change-requests/${asked.change_request.id}`;
    for (const [method, path] of [["GET", cr], ["POST", `${cr}/approve`], ["POST", `${cr}/deny`]]) {
      expect((await call(path, { method, key: other.key })).status, path).toBe(404);
    }
    expect((await json(await call("/api/public/v2/label-change-requests", { key: other.key }))).change_requests).toEqual([]);
    expect((await json(await call(AB, { key: other.key }))).ab_tests).toEqual([]);
    // Still running for its owner, its promote still waiting.
    expect((await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test).toMatchObject({ status: "running", pending_change_request_id: asked.change_request.id });
  });
});

describe("through MCP tools", () => {
  async function tool(key: string, name: string, args: Record<string, unknown>) {
    const res = await call("/mcp", {
      method: "POST",
      headers: { Accept: "application/json, text/event-stream", "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
    });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.error, JSON.stringify(body.error)).toBeUndefined();
    const text: string = body.result.content[0].text;
    return { isError: body.result.isError === true, text, data: body.result.isError ? undefined : JSON.parse(text) };
  }

  it("an agent creates a release, reads a unit's assignment (metadata_filters as an object) as a fetch serves it, and rolls it back; another workspace's is not found", async () => {
    const t = await template();
    const bad = await tool(ws.key, "create-ab-test", release(t, { variants: [{ key: "base", prompt_version_number: 1, percentage: 50 }] }));
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/variants/);
    const made = await tool(ws.key, "create-ab-test", release(t));
    expect(made.isError, made.text).toBe(false);
    const id = made.data.ab_test.id;
    const a = await tool(ws.key, "get-ab-test-assignment", { ab_test_id: id, metadata_filters: { user_id: "agent-7" } });
    expect(a.data).toMatchObject({ ab_test_id: id, assignment: "sticky", serving: true });
    const served = await json(await fetchPost(ws.key, t.name, { label: "prod", metadata_filters: { user_id: "agent-7" } }));
    expect(served.version).toBe(a.data.prompt_version_number);
    expect((await tool(other.key, "get-ab-test-assignment", { ab_test_id: id, metadata_filters: { user_id: "agent-7" } })).isError).toBe(true);
    const rolled = await tool(ws.key, "rollback-ab-test", { ab_test_id: id });
    expect(rolled.data.ab_test).toMatchObject({ id, status: "completed" });
    const events = await tool(ws.key, "get-ab-test-events", { ab_test_id: id });
    expect(events.data.events.map((e: { action: string }) => e.action)).toEqual(["rolled_back", "created"]);
  });
});

describe("scopes and the audit log", () => {
  const audit = async (action: string, target: number) => (await json(await call(`/api/public/v2/audit-log?action=${action}&target_id=${target}`, { key: ws.key }))).items as Record<string, any>[];

  it("a prompts:write key runs releases (each change in the audit log with its key); a read key only reads; protecting a label and deciding its moves take admin", async () => {
    const t = await template();
    const writer = await scopedKey(ws, ["prompts:write"]);
    const reader = await scopedKey(ws, ["read"]);
    const refused = await call(AB, { method: "POST", key: reader, json: release(t) });
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toMatch(/prompts:write/);
    const made = await create(release(t), writer);
    expect(made.status).toBe(201);
    const id = made.body.ab_test.id;
    expect((await call(`${AB}/${id}/scorecard`, { key: reader })).status).toBe(200);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: reader, json: { status: "paused" } })).status).toBe(403);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: writer, json: { variants: [{ key: "challenger", percentage: 20 }, { key: "base", percentage: 80 }] } })).status).toBe(200);
    const created = await audit("ab_test.created", id);
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ target_type: "ab_test", api_key_prefix: writer.slice(0, 11), user_email: ws.email, details: { ab_test_id: id, release_label: "prod" } });
    expect(await audit("ab_test.updated", id)).toHaveLength(1);

    // Protection and approvals: admin only; a prompts:write key asks (its promote waits), an admin approves.
    const labelId = (await json(await call(`/prompt-templates/${t.name}/labels`, { key: ws.key }))).release_labels[0].release_label_id;
    expect((await call(`/api/public/v2/prompt-labels/${labelId}/protection`, { method: "PUT", key: writer, json: { protected: true } })).status).toBe(403);
    expect((await call(`/api/public/v2/prompt-labels/${labelId}/protection`, { method: "PUT", key: ws.key, json: { protected: true } })).status).toBe(200);
    const asked = await call(`${AB}/${id}/promote`, { method: "POST", key: writer, json: { variant: "challenger" } });
    expect(asked.status).toBe(202);
    const cr = (await json(asked)).change_request.id;
    expect((await call(`/api/public/v2/label-change-requests/${cr}`, { key: reader })).status).toBe(200);
    expect((await call(`/api/public/v2/label-change-requests/${cr}/approve`, { method: "POST", key: writer })).status).toBe(403);
    expect((await call(`/api/public/v2/label-change-requests/${cr}/approve`, { method: "POST", key: ws.key })).status).toBe(200);
    for (const action of ["prompt_label.protected", "prompt_label.change_requested", "prompt_label.change_approved", "prompt_label.moved"]) {
      expect(await audit(action, t.id), action).toHaveLength(1);
    }
    const promoted = await audit("ab_test.promoted", id);
    expect(promoted).toHaveLength(1);
    expect(promoted[0]).toMatchObject({ api_key_prefix: ws.key.slice(0, 11), details: { variant: "challenger", change_request_id: cr } });
    // Another workspace sees none of it.
    expect((await json(await call(`/api/public/v2/audit-log?target_type=ab_test&target_id=${id}`, { key: other.key }))).items).toEqual([]);
  });
});
