// Signals through /mcp: the tools of the one tool table call the REST operations in-process, with the
// same validation and workspace isolation (every tool that takes an id, from another workspace).
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";
import { logAnswer } from "../helpers/signals";

let ids = 0;
async function tool(key: string, name: string, args: Record<string, unknown>) {
  const res = await call("/mcp", {
    method: "POST",
    headers: { Accept: "application/json, text/event-stream", "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++ids, method: "tools/call", params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  const body = await json(res);
  const text: string = body.result.content[0].text;
  return { isError: body.result.isError === true, text, data: body.result.isError ? undefined : JSON.parse(text) };
}

describe("Signals' MCP tools", () => {
  it("create, list, test, enable and delete a signal, each another workspace's a not-found", async () => {
    const [ws, other] = [await createWorkspace(), await createWorkspace()];
    const created = await tool(ws.key, "create-signal", { name: "Refund promised", statement: "Did it promise a refund?", hooks: [{ scope: "all", sample_rate: 1 }] });
    expect(created.isError, created.text).toBe(false);
    const id = created.data.signal.id;
    expect((await tool(ws.key, "list-signals", {})).data.items.map((s: { id: number }) => s.id)).toEqual([id]);
    const log = await logAnswer(ws, "Refund approved [[verdict:true]]");
    const tested = await tool(ws.key, "test-saved-signal", { signal_id: id, request_ids: [log] });
    expect(tested.data.results).toMatchObject([{ request_id: log, result: true, status: "ok" }]);
    expect((await tool(ws.key, "test-signal", { statement: "x", request_ids: Array.from({ length: 21 }, () => log) })).isError).toBe(true);
    expect((await tool(ws.key, "update-signal", { signal_id: id, enabled: true })).data.signal.enabled).toBe(true);
    const foreign = await tool(other.key, "get-signal", { signal_id: id });
    expect(foreign.isError).toBe(true);
    expect(foreign.text).toMatch(/not found/);
    expect((await tool(ws.key, "delete-signal", { signal_id: id })).isError).toBe(false);
    expect((await tool(ws.key, "get-signal", { signal_id: id })).isError).toBe(true);
  });

  it("every signal tool given another workspace's signal, hook or backfill is a not-found error, and changes nothing", async () => {
    const [ws, other] = [await createWorkspace(), await createWorkspace()];
    const s = (await tool(ws.key, "create-signal", { name: "Owned", statement: "Did it help?", hooks: [{ scope: "all", sample_rate: 0.5 }] })).data.signal;
    const hook = s.hooks[0].id;
    const backfill = (await tool(ws.key, "create-signal-backfill", { signal_id: s.id, from: 0, to: 10 })).data.backfill;
    const theirs = await logAnswer(other, "their own log");
    const calls: [string, Record<string, unknown>][] = [
      ["update-signal", { signal_id: s.id, enabled: true }],
      ["delete-signal", { signal_id: s.id }],
      ["add-signal-hook", { signal_id: s.id, scope: "all" }],
      ["update-signal-hook", { signal_id: s.id, hook_id: hook, sample_rate: 1 }],
      ["delete-signal-hook", { signal_id: s.id, hook_id: hook }],
      ["test-saved-signal", { signal_id: s.id, request_ids: [theirs] }],
      ["get-signal-series", { signal_id: s.id }],
      ["create-signal-backfill", { signal_id: s.id, from: 0, to: 10 }],
      ["list-signal-backfills", { signal_id: s.id }],
      ["get-signal-backfill", { signal_id: s.id, backfill_id: backfill.id }],
      ["cancel-signal-backfill", { signal_id: s.id, backfill_id: backfill.id }],
    ];
    for (const [name, args] of calls) {
      const r = await tool(other.key, name, args);
      expect(r.isError, `${name}: ${r.text}`).toBe(true);
      expect(r.text, name).toMatch(/not found/);
    }
    // Lists and estimates from the other workspace see none of it.
    expect((await tool(other.key, "list-signals", {})).data.items).toEqual([]);
    const mine = await logAnswer(ws, "my log");
    const tested = await tool(other.key, "test-signal", { statement: "x", request_ids: [mine] });
    expect(tested.isError).toBe(true);
    expect(tested.text).toMatch(/not found/);
    // Nothing changed: still disabled, one hook at 0.5, one backfill.
    const still = (await tool(ws.key, "get-signal", { signal_id: s.id })).data.signal;
    expect(still).toMatchObject({ enabled: false, hooks: [{ id: hook, sample_rate: 0.5 }] });
    expect((await tool(ws.key, "list-signal-backfills", { signal_id: s.id })).data.backfills.map((b: { id: number }) => b.id)).toEqual([backfill.id]);
  });
});
