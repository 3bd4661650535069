// A signal's verdicts are its own by id: search's `signals` filter resolves the name it is given to the
// workspace's signal of that name first, and every reader (a log's detail, the export, a dataset filled
// from a filter) shows a verdict under its signal's current name. So a deleted signal's verdicts are
// found and shown nowhere, before its purge job has run as after; a new signal given the same name
// inherits none of them; a rename is found and shown at once; and no workspace reaches another's.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../../helpers/api";
import { exportedBetween, filledIds } from "../../helpers/log-reads";
import { logAnswer, newSignal, resultsOf, SIGNALS, storeVerdict } from "../../helpers/signals";

/** The ids a search by one signal verdict finds, sorted. */
async function found(ws: TestKey, name: string, operator: string): Promise<number[]> {
  const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { filters: [{ field: "signals", nested_key: name, operator }] }, per_page: 100 } });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.items.map((i: { id: number }) => i.id).sort((a: number, b: number) => a - b);
}

const shown = async (ws: TestKey, id: number) => (await json(await call(`/api/public/v2/requests/${id}`, { key: ws.key }))).signals as { signal_id: number; name: string; result: boolean }[];
const exported = async (ws: TestKey) => new Map((await exportedBetween(ws, 0, Date.now() + 86_400_000)).map((l) => [l.request_id as number, l.signals as { signal_id: number; name: string }[]]));

/** A workspace with two logs, `yes` judged true and `no` false by the signal `name`. */
async function judged(name: string) {
  const ws = await createWorkspace();
  const s = await newSignal(ws, { name });
  const [yes, no] = [await logAnswer(ws, "a refund is on its way"), await logAnswer(ws, "no refund")];
  await storeVerdict(ws, s.id, yes, true);
  await storeVerdict(ws, s.id, no, false);
  return { ws, s, yes, no };
}

describe("signal verdicts are matched by signal id", () => {
  it("finds and shows none of a deleted signal's verdicts before its purge has run, and a new signal of its name inherits none", async () => {
    const { ws, s, yes, no } = await judged("Refund promised");
    expect(await found(ws, "Refund promised", "is_true")).toEqual([yes]);
    expect(await shown(ws, yes)).toMatchObject([{ signal_id: s.id, name: "Refund promised", result: true }]);
    // The signal deleted as DELETE leaves it until its purge job has run: its row gone from the control
    // database, its results still beside the logs (the job held back: only the row is removed here).
    await env.DB.prepare("DELETE FROM signals WHERE id = ?").bind(s.id).run();
    expect((await resultsOf(ws, yes)).map((r) => r.signal_id)).toEqual([s.id]);
    for (const operator of ["is_true", "is_false", "is_not_null"]) expect(await found(ws, "Refund promised", operator)).toEqual([]);
    expect(await found(ws, "Refund promised", "is_null")).toEqual([yes, no]);
    expect(await shown(ws, yes)).toEqual([]);
    const lines = await exported(ws);
    expect([lines.get(yes), lines.get(no)]).toEqual([[], []]);
    // A new signal given the name: none of the old verdicts are its.
    const again = await newSignal(ws, { name: "Refund promised" });
    expect(again.id).not.toBe(s.id);
    for (const operator of ["is_true", "is_false", "is_not_null"]) expect(await found(ws, "Refund promised", operator)).toEqual([]);
    expect(await shown(ws, no)).toEqual([]);
    // Its own verdicts are found and shown as its.
    await storeVerdict(ws, again.id, no, true);
    expect(await found(ws, "Refund promised", "is_true")).toEqual([no]);
    expect(await found(ws, "Refund promised", "is_null")).toEqual([yes]);
    expect(await shown(ws, no)).toMatchObject([{ signal_id: again.id, name: "Refund promised", result: true }]);
    expect((await exported(ws)).get(no)).toMatchObject([{ signal_id: again.id }]);
  });

  it("finds a renamed signal's verdicts under its new name at once and shows them with it; the old name finds none", async () => {
    const { ws, s, yes, no } = await judged("Polite");
    const res = await call(`${SIGNALS}/${s.id}`, { method: "PATCH", key: ws.key, json: { name: "Stays polite" } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await found(ws, "Stays polite", "is_true")).toEqual([yes]);
    expect(await found(ws, "Stays polite", "is_false")).toEqual([no]);
    expect(await found(ws, "Polite", "is_not_null")).toEqual([]);
    expect(await shown(ws, yes)).toMatchObject([{ signal_id: s.id, name: "Stays polite", result: true }]);
    expect((await exported(ws)).get(no)).toMatchObject([{ signal_id: s.id, name: "Stays polite", result: false }]);
    // A snapshot job compiles the same filter with the same names: a dataset filled from it.
    expect(await filledIds(ws, { filter_group: { filters: [{ field: "signals", nested_key: "Stays polite", operator: "is_true" }] } })).toEqual([yes]);
    expect(await filledIds(ws, { filter_group: { filters: [{ field: "signals", nested_key: "Polite", operator: "is_true" }] } })).toEqual([]);
  });

  it("keeps workspaces apart: a signal of the same name in another workspace finds and shows only its own verdicts", async () => {
    const a = await judged("Shared name");
    const b = await judged("Shared name");
    expect(b.s.id).not.toBe(a.s.id);
    expect(await found(a.ws, "Shared name", "is_true")).toEqual([a.yes]);
    expect(await found(b.ws, "Shared name", "is_true")).toEqual([b.yes]);
    expect(await found(b.ws, "Shared name", "is_null")).toEqual([]);
    // A workspace without a signal of that name finds no verdict, whatever other workspaces hold.
    const c = await createWorkspace();
    const log = await logAnswer(c, "hello");
    expect(await found(c, "Shared name", "is_true")).toEqual([]);
    expect(await found(c, "Shared name", "is_null")).toEqual([log]);
    expect((await call(`/api/public/v2/requests/${a.yes}`, { key: b.ws.key })).status).toBe(404);
  });
});
