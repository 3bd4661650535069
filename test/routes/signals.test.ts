// /api/public/v2/signals as a resource: create (defaults, validation, limits on both sides), list with
// totals, read, change (revision), delete, hooks one at a time, tests (20 logs, 21 a 400), estimates,
// and every route's isolation by workspace; custom charts of a `signal:<name>` field.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json, scopedKey, type TestKey } from "../helpers/api";
import { text } from "../helpers/fixtures";
import { logAnswer, newSignal, owe, owedCount, SIGNALS, uniq, until } from "../helpers/signals";

const post = (ws: TestKey, path: string, body: unknown) => call(path, { method: "POST", key: ws.key, json: body });
const patch = (ws: TestKey, path: string, body: unknown) => call(path, { method: "PATCH", key: ws.key, json: body });
const get = (ws: TestKey, path: string) => call(path, { key: ws.key });
const del = (ws: TestKey, path: string) => call(path, { method: "DELETE", key: ws.key });

async function expect400(res: Response, field: string) {
  const text = await res.text();
  expect(res.status, text).toBe(400);
  expect(JSON.parse(text)).toMatchObject({ success: false, error: "validation_error" });
  expect(text).toContain(field);
}

async function template(ws: TestKey, name = uniq("tpl")) {
  const res = await post(ws, "/rest/prompt-templates", {
    prompt_template: { prompt_name: name },
    prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] } },
    release_labels: ["prod"],
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json(res)).id as number;
}

describe("signals: create, read, list", () => {
  it("creates a disabled signal with the defaults, and reads it back with empty totals", async () => {
    const ws = await createWorkspace();
    const res = await post(ws, SIGNALS, { name: "Replied in the user's language", statement: "Did the assistant reply in the language the user wrote in?", hooks: [{ scope: "all" }] });
    expect(res.status).toBe(201);
    const { signal } = await json(res);
    expect(signal).toMatchObject({
      name: "Replied in the user's language",
      enabled: false,
      color: null,
      model: null,
      include: { input: true, output: true, metadata: false, tools: true, max_chars: 20000 },
      delay_seconds: 0,
      limits: { daily_runs: null, daily_cost_usd: null },
      revision: 1,
      totals: { processed: 0, true: 0, false: 0, errors: 0, skipped: 0, true_rate: null, cost_usd: 0 },
    });
    expect(signal.hooks).toMatchObject([{ scope: "all", sample_rate: 0.5, filters: null, prompt_template_id: null, ab_variant: null }]);
    const again = await json(await get(ws, `${SIGNALS}/${signal.id}`));
    expect(again.signal).toEqual(signal);
  });

  it("takes every field: color, model, include, delay, limits and hooks with filters", async () => {
    const ws = await createWorkspace();
    const tpl = await template(ws);
    const signal = await newSignal(ws, {
      color: "#22c55e",
      enabled: true,
      model: { provider: "OpenAI", name: "gpt-4o-mini", parameters: { temperature: 0 } },
      include: { metadata: true, max_chars: 500 },
      delay_seconds: 30,
      limits: { daily_runs: 100, daily_cost_usd: 2.5 },
      hooks: [
        { scope: "prompt_template", prompt_template_id: tpl, prompt_version_number: 1, sample_rate: 1 },
        { scope: "prompt_template", prompt_template_id: tpl, release_label: "prod", sample_rate: 0.25 },
        { scope: "release_label", release_label: "prod", ab_variant: "challenger" },
        { scope: "all", filters: { logic: "AND", filters: [{ field: "tags", operator: "contains", value: "prod" }] } },
      ],
    });
    expect(signal).toMatchObject({
      color: "#22c55e",
      enabled: true,
      model: { provider: "openai", name: "gpt-4o-mini", parameters: { temperature: 0 } },
      include: { input: true, output: true, metadata: true, tools: true, max_chars: 500 },
      delay_seconds: 30,
      limits: { daily_runs: 100, daily_cost_usd: 2.5 },
    });
    expect(signal.hooks.map((h: any) => [h.scope, h.prompt_template_id, h.prompt_version_number, h.release_label, h.ab_variant, h.sample_rate])).toEqual([
      ["prompt_template", tpl, 1, null, null, 1],
      ["prompt_template", tpl, null, "prod", null, 0.25],
      ["release_label", null, null, "prod", "challenger", 0.5],
      ["all", null, null, null, null, 0.5],
    ]);
    expect(signal.hooks[3].filters).toEqual({ logic: "AND", filters: [{ field: "tags", operator: "contains", value: "prod" }] });
  });

  it("refuses bad input with a 400 naming the field, and stores nothing", async () => {
    const ws = await createWorkspace();
    const ok = { name: uniq("s"), statement: "x" };
    await expect400(await post(ws, SIGNALS, { statement: "x" }), "name");
    await expect400(await post(ws, SIGNALS, { name: "s" }), "statement");
    await expect400(await post(ws, SIGNALS, { ...ok, statement: "   " }), "statement");
    await expect400(await post(ws, SIGNALS, { ...ok, color: "green" }), "color");
    await expect400(await post(ws, SIGNALS, { ...ok, model: { provider: "google", name: "gemini" } }), "model.provider");
    await expect400(await post(ws, SIGNALS, { ...ok, include: { max_chars: 0 } }), "include.max_chars");
    await expect400(await post(ws, SIGNALS, { ...ok, include: { max_chars: 100_001 } }), "include.max_chars");
    await expect400(await post(ws, SIGNALS, { ...ok, delay_seconds: -1 }), "delay_seconds");
    await expect400(await post(ws, SIGNALS, { ...ok, delay_seconds: 43_201 }), "delay_seconds");
    await expect400(await post(ws, SIGNALS, { ...ok, limits: { daily_runs: 0 } }), "limits.daily_runs");
    await expect400(await post(ws, SIGNALS, { ...ok, limits: { daily_cost_usd: 0 } }), "limits.daily_cost_usd");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "everything" }] }), "hooks[0].scope");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "all", sample_rate: 1.01 }] }), "hooks[0].sample_rate");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "all", sample_rate: -0.01 }] }), "hooks[0].sample_rate");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "prompt_template" }] }), "hooks[0].prompt_template_id");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "release_label" }] }), "hooks[0].release_label");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "all", prompt_template_id: 3 }] }), "hooks[0].prompt_template_id");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "all", filters: { filters: [{ field: "nope", operator: "is", value: 1 }] } }] }), "hooks[0].filters");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "prompt_template", prompt_template_id: 999_999_999 }] }), "hooks[0].prompt_template_id");
    const tpl = await template(ws);
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "prompt_template", prompt_template_id: tpl, prompt_version_number: 9 }] }), "hooks[0].prompt_version_number");
    await expect400(await post(ws, SIGNALS, { ...ok, hooks: [{ scope: "prompt_template", prompt_template_id: tpl, release_label: "nope" }] }), "hooks[0].release_label");
    expect((await json(await get(ws, SIGNALS))).total).toBe(0);
  });

  it("holds the statement to 4,000 characters and hooks to 20, on both sides", async () => {
    const ws = await createWorkspace();
    expect((await post(ws, SIGNALS, { name: uniq("s"), statement: "x".repeat(4000) })).status).toBe(201);
    await expect400(await post(ws, SIGNALS, { name: uniq("s"), statement: "x".repeat(4001) }), "statement");
    const twenty = Array.from({ length: 20 }, () => ({ scope: "all" }));
    const s = await newSignal(ws, { hooks: twenty });
    expect(s.hooks).toHaveLength(20);
    await expect400(await post(ws, SIGNALS, { name: uniq("s"), statement: "x", hooks: [...twenty, { scope: "all" }] }), "hooks");
    const add = await post(ws, `${SIGNALS}/${s.id}/hooks`, { scope: "all" });
    expect(add.status).toBe(409);
  });

  it("keeps names unique per workspace (409) and free in another workspace", async () => {
    const [a, b] = [await createWorkspace(), await createWorkspace()];
    await newSignal(a, { name: "Refund promised" });
    const dup = await post(a, SIGNALS, { name: "Refund promised", statement: "y" });
    expect(dup.status).toBe(409);
    expect((await json(dup)).error).toBe("conflict");
    await newSignal(b, { name: "Refund promised" });
  });

  it("allows 50 enabled signals a workspace, refuses the 51st (create and enable), and takes more disabled ones", async () => {
    const ws = await createWorkspace();
    // 49 written straight to the table (the API's own create is what the test is about), then the 50th.
    await env.DB.prepare(
      `INSERT INTO signals (workspace_id, name, statement, enabled, include) SELECT ?, 'bulk-' || value, 'x', 1, '{}' FROM json_each(?)`,
    )
      .bind(ws.workspaceId, JSON.stringify(Array.from({ length: 49 }, (_, i) => i)))
      .run();
    await newSignal(ws, { enabled: true });
    const over = await post(ws, SIGNALS, { name: uniq("s"), statement: "x", enabled: true });
    expect(over.status).toBe(409);
    expect((await json(over)).message).toContain("50 enabled signals");
    const off = await newSignal(ws);
    expect((await patch(ws, `${SIGNALS}/${off.id}`, { enabled: true })).status).toBe(409);
    expect((await json(await get(ws, `${SIGNALS}?enabled=true&per_page=100`))).total).toBe(50);
    // Disabling one makes room.
    const first = (await json(await get(ws, `${SIGNALS}?enabled=true&per_page=1`))).items[0];
    expect((await patch(ws, `${SIGNALS}/${first.id}`, { enabled: false })).status).toBe(200);
    expect((await patch(ws, `${SIGNALS}/${off.id}`, { enabled: true })).status).toBe(200);
  });

  it("changes nothing on a create refused at the cap, though a signal of that name exists (no hooks, no audit row attached to it)", async () => {
    const ws = await createWorkspace();
    const existing = await newSignal(ws, { name: "Existing", hooks: [{ scope: "all", sample_rate: 1 }] });
    await env.DB.prepare(`INSERT INTO signals (workspace_id, name, statement, enabled, include) SELECT ?, 'bulk-' || value, 'x', 1, '{}' FROM json_each(?)`)
      .bind(ws.workspaceId, JSON.stringify(Array.from({ length: 50 }, (_, i) => i)))
      .run();
    const refused = await post(ws, SIGNALS, { name: "Existing", statement: "x", enabled: true, hooks: [{ scope: "all", sample_rate: 1 }, { scope: "all", sample_rate: 1 }] });
    expect(refused.status).toBe(409);
    expect((await json(await get(ws, `${SIGNALS}/${existing.id}`))).signal.hooks).toHaveLength(1);
    const audited = await env.DB.prepare(`SELECT count(*) AS n FROM audit_events WHERE workspace_id = ? AND action = 'signal.created'`).bind(ws.workspaceId).first<{ n: number }>();
    expect(audited!.n).toBe(1);
  });

  it("refuses a release_label hook whose label no template of the workspace has (400), and takes one that exists", async () => {
    const ws = await createWorkspace();
    await expect400(await post(ws, SIGNALS, { name: uniq("s"), statement: "x", hooks: [{ scope: "release_label", release_label: "nowhere" }] }), "hooks[0].release_label");
    await template(ws);
    await newSignal(ws, { hooks: [{ scope: "release_label", release_label: "prod" }] });
    // Another workspace's label is not this one's.
    const other = await createWorkspace();
    await expect400(await post(other, SIGNALS, { name: uniq("s"), statement: "x", hooks: [{ scope: "release_label", release_label: "prod" }] }), "hooks[0].release_label");
  });

  it("lists with paging, name and enabled filters, newest first by default", async () => {
    const ws = await createWorkspace();
    const a = await newSignal(ws, { name: "alpha tone" });
    const b = await newSignal(ws, { name: "beta refund", enabled: true });
    const c = await newSignal(ws, { name: "gamma tone" });
    const all = await json(await get(ws, SIGNALS));
    expect(all.items.map((s: any) => s.id)).toEqual([c.id, b.id, a.id]);
    expect(all).toMatchObject({ page: 1, per_page: 20, total: 3, pages: 1 });
    expect((await json(await get(ws, `${SIGNALS}?name=TONE&sort_order=asc`))).items.map((s: any) => s.id)).toEqual([a.id, c.id]);
    expect((await json(await get(ws, `${SIGNALS}?enabled=true`))).items.map((s: any) => s.id)).toEqual([b.id]);
    expect((await json(await get(ws, `${SIGNALS}?per_page=1&page=2`))).items.map((s: any) => s.id)).toEqual([b.id]);
    await expect400(await get(ws, `${SIGNALS}?per_page=101`), "per_page");
    await expect400(await get(ws, `${SIGNALS}?enabled=maybe`), "enabled");
  });
});

describe("signals: change and delete", () => {
  it("moves revision on when statement, model or include change, and not for the rest", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { statement: "Polite?" });
    const at = async (body: unknown) => {
      const res = await patch(ws, `${SIGNALS}/${s.id}`, body);
      expect(res.status, await res.clone().text()).toBe(200);
      return (await json(res)).signal;
    };
    expect((await at({ color: "#000000", enabled: true, delay_seconds: 5, limits: { daily_runs: 9 } })).revision).toBe(1);
    expect((await at({ statement: "Polite?" })).revision).toBe(1);
    expect((await at({ statement: "Polite and brief?" })).revision).toBe(2);
    expect((await at({ model: { provider: "openai", name: "gpt-4o" } })).revision).toBe(3);
    expect((await at({ include: { metadata: true } })).revision).toBe(4);
    expect((await at({ include: { metadata: true } })).revision).toBe(4);
    const last = await at({ name: "renamed", limits: null });
    expect(last).toMatchObject({ name: "renamed", revision: 4, color: "#000000", enabled: true, delay_seconds: 5, limits: { daily_runs: null, daily_cost_usd: null } });
    await expect400(await patch(ws, `${SIGNALS}/${s.id}`, { statement: "" }), "statement");
    const other = await newSignal(ws);
    expect((await patch(ws, `${SIGNALS}/${other.id}`, { name: "renamed" })).status).toBe(409);
  });

  it("edits hooks one at a time (add, change, delete), checking the hook they make whole", async () => {
    const ws = await createWorkspace();
    const tpl = await template(ws);
    const s = await newSignal(ws, { hooks: [{ scope: "all" }] });
    const added = await post(ws, `${SIGNALS}/${s.id}/hooks`, { scope: "prompt_template", prompt_template_id: tpl, sample_rate: 0.1 });
    expect(added.status).toBe(201);
    const { hook } = await json(added);
    expect(hook).toMatchObject({ signal_id: s.id, scope: "prompt_template", prompt_template_id: tpl, sample_rate: 0.1 });
    const changed = await patch(ws, `${SIGNALS}/${s.id}/hooks/${hook.id}`, { sample_rate: 1, prompt_version_number: 1 });
    expect((await json(changed)).hook).toMatchObject({ sample_rate: 1, prompt_version_number: 1, prompt_template_id: tpl });
    await expect400(await patch(ws, `${SIGNALS}/${s.id}/hooks/${hook.id}`, { scope: "all" }), "prompt_template_id");
    await expect400(await patch(ws, `${SIGNALS}/${s.id}/hooks/${hook.id}`, { prompt_version_number: 7 }), "prompt_version_number");
    expect((await json(await get(ws, `${SIGNALS}/${s.id}/hooks`))).hooks.map((h: any) => h.id)).toEqual([s.hooks[0].id, hook.id]);
    expect((await del(ws, `${SIGNALS}/${s.id}/hooks/${s.hooks[0].id}`)).status).toBe(200);
    expect((await del(ws, `${SIGNALS}/${s.id}/hooks/${s.hooks[0].id}`)).status).toBe(404);
    expect((await json(await get(ws, `${SIGNALS}/${s.id}`))).signal.hooks.map((h: any) => h.id)).toEqual([hook.id]);
    // A hook of another signal is not this signal's.
    const t = await newSignal(ws);
    expect((await patch(ws, `${SIGNALS}/${t.id}/hooks/${hook.id}`, { sample_rate: 0 })).status).toBe(404);
  });

  it("deletes a signal with its hooks: the name is free again and its id a 404", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { name: "gone soon", hooks: [{ scope: "all" }] });
    expect((await del(ws, `${SIGNALS}/${s.id}`)).status).toBe(200);
    expect((await get(ws, `${SIGNALS}/${s.id}`)).status).toBe(404);
    expect((await del(ws, `${SIGNALS}/${s.id}`)).status).toBe(404);
    await newSignal(ws, { name: "gone soon" });
  });
});

describe("signals: test and estimate", () => {
  it("judges up to 20 chosen logs side by side and stores nothing; 21 is a 400", async () => {
    const ws = await createWorkspace();
    const ids = [await logAnswer(ws, "Refund approved [[verdict:true]] [[quote:Refund approved]]"), await logAnswer(ws, "No refund for you [[verdict:false]]")];
    const res = await post(ws, `${SIGNALS}/test`, { statement: "Did the assistant promise a refund?", request_ids: ids });
    expect(res.status, await res.clone().text()).toBe(200);
    const { results } = await json(res);
    expect(results).toMatchObject([
      { request_id: ids[0], status: "ok", result: true, quote: "Refund approved", quote_verified: true, model: "gpt-4o-mini", error: null },
      { request_id: ids[1], status: "ok", result: false, quote: "", quote_verified: false },
    ]);
    expect(results[0].input_tokens).toBeGreaterThan(0);
    expect(results[0].cost_usd).toBeGreaterThan(0);
    const twenty = Array.from({ length: 20 }, () => ids[0]);
    expect((await post(ws, `${SIGNALS}/test`, { statement: "x", request_ids: twenty })).status).toBe(200);
    await expect400(await post(ws, `${SIGNALS}/test`, { statement: "x", request_ids: [...twenty, ids[1]] }), "request_ids");
    await expect400(await post(ws, `${SIGNALS}/test`, { statement: "x", request_ids: [] }), "request_ids");
    // Nothing stored: the saved signal's test neither.
    const s = await newSignal(ws, { statement: "Refund? [[quote:not in the log]]" });
    const saved = await json(await post(ws, `${SIGNALS}/${s.id}/test`, { request_ids: [ids[0]] }));
    expect(saved.results[0]).toMatchObject({ result: true, quote: "not in the log", quote_verified: false });
    const after = await json(await get(ws, `${SIGNALS}/${s.id}`));
    expect(after.signal.totals.processed).toBe(0);
    const detail = await json(await get(ws, `/api/public/v2/requests/${ids[0]}`));
    expect(detail.signals ?? []).toEqual([]);
    // The workspace's own key comes first, then the Worker's: a key the provider refuses is the judge's error.
    expect((await post(ws, "/api/public/v2/env-vars", { key: "OPENAI_API_KEY", value: "the-workspace-key" })).status).toBeLessThan(300);
    const refused = (await json(await post(ws, `${SIGNALS}/test`, { statement: "x", request_ids: [ids[0]] }))).results[0];
    expect(refused).toMatchObject({ status: "error", result: null });
    expect(refused.error).toContain("401");
  });

  it("answers a provider's failure and a bad answer as error verdicts, and an unknown log as a 404", async () => {
    const ws = await createWorkspace();
    const ids = [await logAnswer(ws, "[[judge-status:429]]"), await logAnswer(ws, "[[judge-bad]]")];
    const { results } = await json(await post(ws, `${SIGNALS}/test`, { statement: "x", request_ids: ids }));
    expect(results[0]).toMatchObject({ status: "error", result: null });
    expect(results[0].error).toContain("429");
    expect(results[1]).toMatchObject({ status: "error", result: null });
    expect(results[1].error).toContain("not JSON");
    const missing = await post(ws, `${SIGNALS}/test`, { statement: "x", request_ids: [ids[0], 999_999_999_999] });
    expect(missing.status).toBe(404);
    expect((await json(missing)).message).toContain("999999999999");
    const noModel = await json(await post(ws, `${SIGNALS}/test`, { statement: "x", model: { provider: "anthropic", name: "claude-3-5-haiku-latest" }, request_ids: [ids[0]] }));
    expect(noModel.results[0].status).toBe("error");
    expect(noModel.results[0].error).toContain("ANTHROPIC_API_KEY");
  });

  it("estimates matches, samples and cost per day from the logs each hook would have matched", async () => {
    const ws = await createWorkspace();
    const now = Date.now();
    const at = (ms: number) => ({ request_start_time: new Date(ms).toISOString(), request_end_time: new Date(ms + 1000).toISOString() });
    // Each at its own millisecond: identical bodies timed finer than a second count as one retried log.
    for (let i = 0; i < 6; i++) await logAnswer(ws, "hello there", { ...at(now - 3600_000 + i), tags: i < 2 ? ["vip"] : [] });
    await logAnswer(ws, "an old one", at(now - 20 * 86_400_000));
    const estimate = () =>
      post(ws, `${SIGNALS}/estimate`, {
        window_days: 2,
        statement: "Polite?",
        hooks: [{ scope: "all", sample_rate: 0.5 }, { scope: "all", sample_rate: 1, filters: { filters: [{ field: "tags", operator: "contains", value: "vip" }] } }],
      });
    const res = await estimate();
    expect(res.status, await res.clone().text()).toBe(200);
    // A filter on tags reads the search index, which holds a log a few seconds after its write.
    const e = await until(async () => {
      const answer = await json(await estimate());
      return answer.hooks[1].matches === 2 ? answer : null;
    }, "the tagged logs indexed");
    expect(e.hooks.map((h: any) => [h.matches, h.matches_per_day, h.sampled_per_day])).toEqual([
      [6, 3, 1.5],
      [2, 1, 1],
    ]);
    expect(e.model).toBe("gpt-4o-mini");
    expect(e.sampled_per_day).toBe(2.5);
    expect(e.cost_usd_per_day).toBeGreaterThan(0);
    await expect400(await post(ws, `${SIGNALS}/estimate`, { hooks: [] }), "hooks");
    await expect400(await post(ws, `${SIGNALS}/estimate`, { hooks: [{ scope: "all" }], window_days: 31 }), "window_days");
  });
});

describe("signals: cost caps need a priced judge model", () => {
  const unpriced = { provider: "openai", name: "house-finetune-7" };

  it("refuses daily_cost_usd on create when the judge model has no price, naming it, and stores nothing; takes it on a priced or default model", async () => {
    const ws = await createWorkspace();
    const refused = await post(ws, SIGNALS, { name: uniq("s"), statement: "x", model: unpriced, limits: { daily_cost_usd: 1 } });
    await expect400(refused.clone(), "limits.daily_cost_usd");
    expect((await json(refused)).message).toContain('"house-finetune-7" has no price');
    expect((await json(await get(ws, SIGNALS))).total).toBe(0);
    // The same model with a runs cap, or no cap, is taken; so is a cost cap on a priced model or the default one (gpt-4o-mini here).
    expect((await newSignal(ws, { model: unpriced, limits: { daily_runs: 10 } })).limits).toEqual({ daily_runs: 10, daily_cost_usd: null });
    expect((await newSignal(ws, { model: { provider: "anthropic", name: "claude-3-5-haiku-latest" }, limits: { daily_cost_usd: 1 } })).limits.daily_cost_usd).toBe(1);
    expect((await newSignal(ws, { limits: { daily_cost_usd: 1 } })).limits.daily_cost_usd).toBe(1);
  });

  it("refuses a PATCH that puts a cost cap on an unpriced model or an unpriced model under a cost cap, and changes nothing", async () => {
    const ws = await createWorkspace();
    const capped = await newSignal(ws, { model: { provider: "openai", name: "gpt-4o" }, limits: { daily_cost_usd: 2 } });
    const onModel = await patch(ws, `${SIGNALS}/${capped.id}`, { model: unpriced });
    await expect400(onModel.clone(), "model");
    expect((await json(onModel)).message).toContain("house-finetune-7");
    expect((await json(await get(ws, `${SIGNALS}/${capped.id}`))).signal).toMatchObject({ model: { name: "gpt-4o" }, revision: 1 });
    // Keeping the cap through a partial limits change is the same; dropping it lets the model change.
    await expect400(await patch(ws, `${SIGNALS}/${capped.id}`, { model: unpriced, limits: { daily_runs: 5 } }), "model");
    expect((await patch(ws, `${SIGNALS}/${capped.id}`, { model: unpriced, limits: { daily_cost_usd: null } })).status).toBe(200);
    // Now unpriced: a cost cap is refused, a runs cap and other changes are taken.
    await expect400(await patch(ws, `${SIGNALS}/${capped.id}`, { limits: { daily_cost_usd: 3 } }), "limits.daily_cost_usd");
    expect((await patch(ws, `${SIGNALS}/${capped.id}`, { limits: { daily_runs: 5 }, color: "#000000" })).status).toBe(200);
    // Back on a priced model, with the cap in the same change.
    const back = await patch(ws, `${SIGNALS}/${capped.id}`, { model: { provider: "openai", name: "gpt-4o-mini" }, limits: { daily_cost_usd: 3 } });
    expect(back.status, await back.clone().text()).toBe(200);
    expect((await json(back)).signal.limits).toEqual({ daily_runs: 5, daily_cost_usd: 3 });
  });

  it("estimates an unpriced model's cost as unknown (null), not 0", async () => {
    const ws = await createWorkspace();
    await logAnswer(ws, "hello");
    const e = await json(await post(ws, `${SIGNALS}/estimate`, { statement: "Polite?", model: unpriced, hooks: [{ scope: "all", sample_rate: 1 }] }));
    expect(e).toMatchObject({ model: "house-finetune-7", cost_usd_per_day: null, hooks: [{ cost_per_judgement_usd: null }] });
    const priced = await json(await post(ws, `${SIGNALS}/estimate`, { statement: "Polite?", hooks: [{ scope: "all", sample_rate: 1 }] }));
    expect(priced.hooks[0].cost_per_judgement_usd).toBeGreaterThan(0);
  });
});

describe("signals: estimates check hooks as create does; an empty change changes nothing", () => {
  it("refuses an estimate whose hook names a template, version or label the workspace does not have (another workspace's too), as create does", async () => {
    const [ws, other] = [await createWorkspace(), await createWorkspace()];
    const tpl = await template(ws);
    const foreign = await template(other);
    const estimate = (hook: Record<string, unknown>) => post(ws, `${SIGNALS}/estimate`, { hooks: [{ scope: "all" }, hook] });
    for (const [hook, field] of [
      [{ scope: "prompt_template", prompt_template_id: 999_999_999 }, "hooks[1].prompt_template_id"],
      [{ scope: "prompt_template", prompt_template_id: foreign }, "hooks[1].prompt_template_id"],
      [{ scope: "prompt_template", prompt_template_id: tpl, prompt_version_number: 9 }, "hooks[1].prompt_version_number"],
      [{ scope: "prompt_template", prompt_template_id: tpl, release_label: "nope" }, "hooks[1].release_label"],
      [{ scope: "release_label", release_label: "nowhere" }, "hooks[1].release_label"],
    ] as const) {
      await expect400(await estimate(hook), field);
      await expect400(await post(ws, SIGNALS, { name: uniq("s"), statement: "x", hooks: [{ scope: "all" }, hook] }), field);
    }
    // Hooks that exist are estimated.
    const ok = await estimate({ scope: "prompt_template", prompt_template_id: tpl, release_label: "prod" });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect((await json(ok)).hooks).toHaveLength(2);
  });

  it("answers an empty PATCH of a signal or a hook with a 400 and records nothing; a PATCH that changes nothing writes and records nothing", async () => {
    const ws = await createWorkspace();
    const s = await newSignal(ws, { color: "#112233", limits: { daily_runs: 5 }, model: { provider: "openai", name: "gpt-4o" }, hooks: [{ scope: "all", sample_rate: 0.5 }] });
    const hook = s.hooks[0];
    const audited = async () => (await env.DB.prepare("SELECT count(*) AS n FROM audit_events WHERE workspace_id = ? AND action = 'signal.updated'").bind(ws.workspaceId).first<{ n: number }>())!.n;
    const hookEmpty = await patch(ws, `${SIGNALS}/${s.id}/hooks/${hook.id}`, {});
    await expect400(hookEmpty.clone(), "body");
    expect((await json(hookEmpty)).message).toMatch(/^body: give at least one of scope, /);
    await expect400(await patch(ws, `${SIGNALS}/${s.id}`, {}), "body");
    expect(await audited()).toBe(0);
    // The same values again: 200 with the hook, nothing written.
    const same = await patch(ws, `${SIGNALS}/${s.id}/hooks/${hook.id}`, { sample_rate: 0.5, scope: "all" });
    expect(same.status).toBe(200);
    expect((await json(same)).hook).toEqual(hook);
    const sameSignal = await patch(ws, `${SIGNALS}/${s.id}`, { color: "#112233", enabled: false, limits: { daily_runs: 5 }, model: { provider: "openai", name: "gpt-4o" }, include: { metadata: false } });
    expect(sameSignal.status).toBe(200);
    expect((await json(sameSignal)).signal).toMatchObject({ revision: 1, updated_at: s.updated_at });
    expect(await audited()).toBe(0);
    // A change is recorded, once; null still counts as a change (it clears the field).
    expect((await patch(ws, `${SIGNALS}/${s.id}/hooks/${hook.id}`, { sample_rate: 1 })).status).toBe(200);
    expect((await patch(ws, `${SIGNALS}/${s.id}`, { color: null })).status).toBe(200);
    expect(await audited()).toBe(2);
  });
});

describe("signals: isolation", () => {
  it("answers another workspace's signal, hook and backfill as 404 on every route, and changes nothing", async () => {
    const [a, b] = [await createWorkspace(), await createWorkspace()];
    const s = await newSignal(a, { hooks: [{ scope: "all" }] });
    const hook = s.hooks[0].id;
    const mine = await logAnswer(a, "hi");
    const bf = await json(await post(a, `${SIGNALS}/${s.id}/backfills`, { from: 0, to: Date.now(), max_logs: 1 }));
    const base = `${SIGNALS}/${s.id}`;
    const attempts: Response[] = [
      await get(b, base),
      await patch(b, base, { enabled: true }),
      await post(b, `${base}/test`, { request_ids: [await logAnswer(b, "x")] }),
      await get(b, `${base}/series`),
      await get(b, `${base}/hooks`),
      await post(b, `${base}/hooks`, { scope: "all" }),
      await patch(b, `${base}/hooks/${hook}`, { sample_rate: 1 }),
      await del(b, `${base}/hooks/${hook}`),
      await post(b, `${base}/backfills`, { from: 0, to: 1 }),
      await get(b, `${base}/backfills`),
      await get(b, `${base}/backfills/${bf.backfill.id}`),
      await del(b, `${base}/backfills/${bf.backfill.id}`),
      await del(b, base),
    ];
    for (const res of attempts) expect(res.status, `${res.url}: ${await res.clone().text()}`).toBe(404);
    // A's log is not B's to test.
    expect((await post(b, `${SIGNALS}/test`, { statement: "x", request_ids: [mine] })).status).toBe(404);
    expect((await json(await get(b, SIGNALS))).total).toBe(0);
    const still = (await json(await get(a, base))).signal;
    expect(still).toMatchObject({ enabled: false, hooks: [{ id: hook, sample_rate: 0.5 }] });
  });

  it("answers a backfill read or cancelled through another signal of the same workspace as 404, and leaves it be", async () => {
    const ws = await createWorkspace();
    const [s, t] = [await newSignal(ws), await newSignal(ws)];
    const bf = (await json(await post(ws, `${SIGNALS}/${s.id}/backfills`, { from: 0, to: 10 }))).backfill;
    for (const res of [await get(ws, `${SIGNALS}/${t.id}/backfills/${bf.id}`), await del(ws, `${SIGNALS}/${t.id}/backfills/${bf.id}`)]) {
      expect(res.status).toBe(404);
      expect((await json(res)).message).toContain("backfill");
    }
    expect((await json(await get(ws, `${SIGNALS}/${t.id}/backfills`))).backfills).toEqual([]);
    const mine = (await json(await get(ws, `${SIGNALS}/${s.id}/backfills/${bf.id}`))).backfill;
    expect(mine.status).not.toBe("cancelled");
  });

  it("refuses every route without a key", async () => {
    for (const [method, path] of [
      ["GET", SIGNALS],
      ["POST", SIGNALS],
      ["POST", `${SIGNALS}/test`],
      ["POST", `${SIGNALS}/estimate`],
      ["GET", `${SIGNALS}/1`],
    ]) {
      expect((await call(path, { method, json: method === "POST" ? {} : undefined })).status).toBe(401);
    }
  });
});

// Custom charts over verdicts: avg of `signal:<name>` is its true-rate over the judged logs, sum its true
// verdicts; a name that is no signal of the workspace (another workspace's included) is a 400.
const CHARTS = "/api/public/v2/requests/analytics/custom-analytics";

async function publish(ws: TestKey, name: string, content: string) {
  const res = await call("/rest/prompt-templates", {
    method: "POST",
    key: ws.key,
    json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: text(content) }] } } },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json(res)).id as number;
}

describe("analytics and custom charts: a signal's true-rate", () => {
  it("charts a signal's true-rate per prompt version over time and its true verdicts, adds it to analytics, and refuses unknown names", async () => {
    const ws = await createWorkspace();
    const name = uniq("tpl");
    const tpl = await publish(ws, name, "v1");
    await publish(ws, name, "v2");
    const s = await newSignal(ws, { name: "Refund promised", enabled: true });
    const v = (n: number) => ({ prompt_id: tpl, prompt_version_number: n });
    const judged = [
      await logAnswer(ws, "[[verdict:true]]", v(1)),
      await logAnswer(ws, "[[verdict:true]]", v(1)),
      await logAnswer(ws, "[[verdict:true]]", v(1)),
      await logAnswer(ws, "[[verdict:false]]", v(1)),
      await logAnswer(ws, "[[verdict:true]]", v(2)),
      await logAnswer(ws, "[[verdict:false]]", v(2)),
      await logAnswer(ws, "[[judge-bad]]", v(2)),
    ];
    await logAnswer(ws, "never judged", v(2));
    await owe(ws, s.id, judged);
    await until(async () => (await owedCount(ws)) === 0, "every judgement made");

    const res = await call(CHARTS, {
      method: "POST",
      key: ws.key,
      json: {
        customCharts: [
          { id: "rate", chartType: "line", metric: "avg", metricField: "signal:Refund promised", groupByField: "prompt_version_number", timeSeries: true },
          {
            id: "all",
            chartType: "bar",
            series: [
              { key: "rate", label: "True-rate", metric: "avg", metricField: "signal:Refund promised" },
              { key: "yes", label: "True", metric: "sum", metricField: "signal:Refund promised" },
            ],
          },
          { id: "logs", chartType: "bar", metric: "count" },
        ],
      },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const [rate, all, logs] = (await json(res)).customCharts;
    expect(rate.series.map((x: any) => x.key).sort()).toEqual(["1", "2"]);
    expect(rate.data).toHaveLength(1); // one day
    expect(rate.data[0]).toMatchObject({ "1": 0.75, "2": 0.5 });
    expect(all.series).toEqual([{ key: "rate", label: "True-rate", unit: "number" }, { key: "yes", label: "True", unit: "number" }]);
    expect(all.data[0].rate).toBeCloseTo(4 / 6, 6);
    expect(all.data[0].yes).toBe(4);
    expect(logs.data[0].value).toBe(8);

    // The analytics answer adds each asked signal's true-rate: overall, per period, per prompt version.
    const analytics = async (body: unknown, key = ws.key) => call("/api/public/v2/requests/analytics", { method: "POST", key, json: body });
    const a = await json(await analytics({ signals: ["Refund promised"] }));
    expect(a.totalRequests).toBe(8);
    expect(a.signals["Refund promised"]).toMatchObject({ judged: 6, true: 4, trueRate: 0.666667 });
    expect(a.signals["Refund promised"].trueRateByDay).toEqual([[expect.any(String), 0.666667]]);
    expect(a.signals["Refund promised"].byPromptVersion).toEqual([
      { promptId: String(tpl), promptVersionNumber: 1, judged: 4, true: 3, trueRate: 0.75 },
      { promptId: String(tpl), promptVersionNumber: 2, judged: 2, true: 1, trueRate: 0.5 },
    ]);
    expect(await json(await analytics({}))).not.toHaveProperty("signals");
    for (const [body, pattern] of [
      [{ signals: ["Nope"] }, /signals\.0: no signal named "Nope"/],
      [{ signals: Array.from({ length: 11 }, (_, i) => `s${i}`) }, /at most 10 signals/],
    ] as const) {
      const r = await analytics(body);
      expect(r.status).toBe(400);
      expect((await json(r)).message).toMatch(pattern);
    }
    expect((await analytics({ signals: ["Refund promised"] }, (await createWorkspace()).key)).status).toBe(400);

    const refused = async (customCharts: unknown[], key: string, pattern: RegExp) => {
      const r = await call(CHARTS, { method: "POST", key, json: { customCharts } });
      expect(r.status).toBe(400);
      expect((await json(r)).message).toMatch(pattern);
    };
    await refused([{ id: "a", chartType: "bar", metric: "avg", metricField: "signal:Nope" }], ws.key, /customCharts\.0\.metricField: no signal named "Nope"/);
    await refused(
      [{ id: "a", chartType: "bar", series: [{ key: "a", label: "A", metric: "avg", metricField: "cost" }, { key: "b", label: "B", metric: "sum", metricField: "signal:Nope" }] }],
      ws.key,
      /customCharts\.0\.series\.1\.metricField: no signal named/,
    );
    await refused([{ id: "a", chartType: "bar", metric: "avg", metricField: "signal:" }], ws.key, /metricField/);
    await refused([{ id: "a", chartType: "bar", metric: "percentile", percentile: 50, metricField: "signal:Refund promised" }], ws.key, /latency_ms only/);
    // Another workspace's signal is no signal here.
    await refused([{ id: "a", chartType: "bar", metric: "avg", metricField: "signal:Refund promised" }], (await createWorkspace()).key, /no signal named "Refund promised"/);
  });
});

describe("signals: scopes and the audit log", () => {
  it("reads with signals:read, changes with signals:write (403 naming it otherwise), and records every change in the audit log", async () => {
    const ws = await createWorkspace();
    const reader = await scopedKey(ws, ["signals:read"]);
    const writer = await scopedKey(ws, ["signals:write"]);
    const refused = await call(SIGNALS, { method: "POST", key: reader, json: { name: "x", statement: "y" } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("signals:write");
    const created = await call(SIGNALS, { method: "POST", key: writer, json: { name: "Audited", statement: "Did it help?", limits: { daily_runs: 10 }, hooks: [{ scope: "all" }] } });
    expect(created.status).toBe(201);
    const { signal } = await json(created);
    expect((await call(SIGNALS, { key: reader })).status).toBe(200);
    expect((await call(`${SIGNALS}/test`, { method: "POST", key: reader, json: { statement: "s", request_ids: [1] } })).status).toBe(403);
    // A key of the read scope (every area's reads) changes nothing.
    expect((await call(`${SIGNALS}/${signal.id}`, { method: "PATCH", key: await scopedKey(ws, ["read"]), json: { enabled: true } })).status).toBe(403);

    expect((await call(`${SIGNALS}/${signal.id}`, { method: "PATCH", key: writer, json: { enabled: true, limits: { daily_cost_usd: 2 } } })).status).toBe(200);
    const hook = await json(await call(`${SIGNALS}/${signal.id}/hooks`, { method: "POST", key: writer, json: { scope: "all", sample_rate: 1 } }));
    expect((await call(`${SIGNALS}/${signal.id}/hooks/${hook.hook.id}`, { method: "DELETE", key: writer })).status).toBe(200);
    const now = Date.now();
    const backfill = await json(await call(`${SIGNALS}/${signal.id}/backfills`, { method: "POST", key: writer, json: { from: now - 3_600_000, to: now } }));
    const cancelled = await call(`${SIGNALS}/${signal.id}/backfills/${backfill.backfill.id}`, { method: "DELETE", key: writer });
    expect([200, 409]).toContain(cancelled.status); // an empty range may be over already
    expect((await call(`${SIGNALS}/${signal.id}`, { method: "DELETE", key: writer })).status).toBe(200);
    // A refused change records nothing: a second delete is a 404.
    expect((await call(`${SIGNALS}/${signal.id}`, { method: "DELETE", key: writer })).status).toBe(404);

    const log = (await json(await call("/api/public/v2/audit-log?per_page=100&sort_order=asc", { key: ws.key }))).items.filter((e: any) => e.action.startsWith("signal"));
    const expected = ["signal.created", "signal.updated", "signal.updated", "signal.updated", "signal_backfill.created", ...(cancelled.status === 200 ? ["signal_backfill.cancelled"] : []), "signal.deleted"];
    expect(log.map((e: any) => e.action)).toEqual(expected);
    expect(log[0]).toMatchObject({ target_type: "signal", target_id: String(signal.id), details: { name: "Audited", enabled: false, limits: { daily_runs: 10, daily_cost_usd: null }, hooks: 1 } });
    expect(log[1].details).toMatchObject({ changed: ["enabled", "limits"], enabled: true, limits: { daily_runs: 10, daily_cost_usd: 2 } });
    expect(log[2].details.hook_added).toMatchObject({ id: hook.hook.id, sample_rate: 1 });
    expect(log[3].details).toEqual({ hook_deleted: hook.hook.id });
    expect(log[4]).toMatchObject({ target_type: "signal_backfill", target_id: String(backfill.backfill.id), details: { signal_id: signal.id } });
    expect(log.at(-1)).toMatchObject({ target_id: String(signal.id), details: { name: "Audited" } });
    expect(log.every((e: any) => e.api_key_prefix)).toBe(true);
    // Another workspace's audit log holds none of it.
    const other = await createWorkspace();
    expect((await json(await call("/api/public/v2/audit-log?per_page=100", { key: other.key }))).items.filter((e: any) => e.action.startsWith("signal"))).toEqual([]);
  });
});
