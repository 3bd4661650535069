// Signals against D1's 100 bound parameters (which Miniflare does not enforce, so counts are read from
// the statements): a hook's or backfill's filters that the indexer could not compile are a 400 at create
// and patch, a hook stored before that check is skipped by the indexer (never failing its batch), and
// the indexer's hooks query and the list's totals query take one parameter for any number of ids.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { buildDeps } from "../../../src/deps";
import { getDb } from "../../../src/db/client";
import { signalTotalsQuery } from "../../../src/logs";
import { signalMatcher } from "../../../src/services/signals";
import { liveHooksQuery } from "../../../src/services/signals/matching";
import { call, createWorkspace, json, logsDb } from "../../helpers/api";
import { newSignal, SIGNALS, uniq } from "../../helpers/signals";

/** Six `in` lists of 8 values and 24 `between`s over scores: well within one filter, past 100 with the matcher's own parameters. */
const crowded = {
  logic: "AND",
  filters: [
    ...Array.from({ length: 6 }, (_, i) => ({ field: "scores", nested_key: `in${i}`, operator: "in", value: Array.from({ length: 8 }, (_, j) => i * 10 + j) })),
    ...Array.from({ length: 24 }, (_, i) => ({ field: "scores", nested_key: `b${i}`, operator: "between", value: [1000 + 2 * i, 1001 + 2 * i] })),
  ],
};

async function expect400(res: Response, field: string) {
  const text = await res.text();
  expect(res.status, text).toBe(400);
  expect(JSON.parse(text)).toMatchObject({ success: false, error: "validation_error" });
  expect(text).toContain(field);
}

describe("signals within D1's 100 parameters", () => {
  it("refuses a hook's or backfill's filters the indexer could not compile (create, add, patch), and stores nothing", async () => {
    const ws = await createWorkspace();
    const name = uniq("s");
    await expect400(await call(SIGNALS, { method: "POST", key: ws.key, json: { name, statement: "x", hooks: [{ scope: "all", sample_rate: 1, filters: crowded }] } }), "hooks[0].filters");
    expect((await json(await call(`${SIGNALS}?name=${name}`, { key: ws.key }))).total).toBe(0);
    const s = await newSignal(ws, { hooks: [{ scope: "all" }] });
    await expect400(await call(`${SIGNALS}/${s.id}/hooks`, { method: "POST", key: ws.key, json: { scope: "all", filters: crowded } }), "filters");
    await expect400(await call(`${SIGNALS}/${s.id}/hooks/${s.hooks[0].id}`, { method: "PATCH", key: ws.key, json: { filters: crowded } }), "filters");
    await expect400(await call(`${SIGNALS}/${s.id}/backfills`, { method: "POST", key: ws.key, json: { from: Date.now() - 86_400_000, to: Date.now(), filters: crowded } }), "filters");
    const after = (await json(await call(`${SIGNALS}/${s.id}`, { key: ws.key }))).signal;
    expect(after.hooks).toMatchObject([{ id: s.hooks[0].id, filters: null }]);
    expect((await json(await call(`${SIGNALS}/${s.id}/backfills`, { key: ws.key }))).backfills).toEqual([]);
    // A narrower filter still passes.
    const fine = { logic: "AND", filters: crowded.filters.slice(0, 6) };
    expect((await call(`${SIGNALS}/${s.id}/hooks`, { method: "POST", key: ws.key, json: { scope: "all", filters: fine } })).status).toBe(201);
  });

  it("skips a stored hook whose match cannot be compiled, so the index batch still commits the others", async () => {
    const ws = await createWorkspace();
    const good = await newSignal(ws, { enabled: true, hooks: [{ scope: "all", sample_rate: 1 }] });
    const bad = await newSignal(ws, { enabled: true, hooks: [{ scope: "all", sample_rate: 1 }] });
    // Stored as before the check at create existed.
    await env.DB.prepare("UPDATE signal_hooks SET filters = ? WHERE id = ?").bind(JSON.stringify(crowded), bad.hooks[0].id).run();
    const logs = getDb(await logsDb(ws));
    const matcher = signalMatcher(buildDeps(env));
    const extra = await matcher.batch(logs, [{ id: 1, workspaceId: ws.workspaceId, revision: 0, promptId: null }], 0);
    expect(extra?.statements).toHaveLength(1);
    expect(good.id).toBeLessThan(bad.id);
  });

  it("reads enabled hooks for 100 workspaces and totals for 100 signals in a statement of at most 100 parameters", () => {
    const db = getDb(env.DB);
    const ids = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(liveHooksQuery(db, ids).toSQL().params.length).toBeLessThanOrEqual(100);
    expect(signalTotalsQuery(db, 1, ids).toSQL().params.length).toBeLessThanOrEqual(100);
    expect(liveHooksQuery(db, Array.from({ length: 500 }, (_, i) => i + 1)).toSQL().params.length).toBeLessThanOrEqual(100);
  });
});
