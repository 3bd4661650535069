// Signals through /mcp: the tools of the one tool table call the REST operations in-process, with the
// same validation and workspace isolation.
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
});
