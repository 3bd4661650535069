// One depth rule for free-form JSON: a body nesting deeper than MAX_JSON_DEPTH is a 400 naming where
// (it was a 500 where SQLite's JSON functions met it); span attributes keep OTLP's rule of
// MAX_ATTRIBUTE_DEPTH levels on spans-bulk too. Nothing is stored for a refused body.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, logsDb, type TestKey } from "../helpers/api";
import { bulkSpan, logBody } from "../helpers/fixtures";
import { MAX_ATTRIBUTE_DEPTH, MAX_JSON_DEPTH, tooDeepAt } from "../../src/lib/json-depth";

const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
/** A value of `levels` nested objects ({a: {a: … 1}}). */
function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});

describe("the depth rule", () => {
  it("spans-bulk attributes nested ~1,000 levels are a 400, not a 500, and nothing is stored", async () => {
    const trace = hex(16);
    const res = await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans: [bulkSpan(trace, hex(8), { attributes: { deep: nested(1000) } })] } });
    const body = await json(res);
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(400);
    expect(body.error).toBe("validation_error");
    expect(body.message).toMatch(/nests deeper than \d+ levels/);
    const db = await logsDb(ws);
    expect(await db.prepare("SELECT count(*) AS n FROM spans WHERE trace_id = ?").bind(trace).first("n")).toBe(0);
  });

  it("span attributes follow OTLP's rule: MAX_ATTRIBUTE_DEPTH levels taken, one more refused", async () => {
    const ok = await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans: [bulkSpan(hex(16), hex(8), { attributes: { v: nested(MAX_ATTRIBUTE_DEPTH) } })] } });
    expect(ok.status).toBe(201);
    const over = await call("/spans-bulk", {
      method: "POST",
      key: ws.key,
      json: { spans: [bulkSpan(hex(16), hex(8), { events: [{ name: "e", attributes: { v: nested(MAX_ATTRIBUTE_DEPTH + 1) } }] })] },
    });
    expect(over.status).toBe(400);
    expect((await json(over)).message).toMatch(/^spans\[0\]\.events\[0\]\.attributes\.v(\.a)+: an attribute value nests deeper than 16 levels/);
  });

  it("any JSON body: MAX_JSON_DEPTH levels pass the rule, one more is a 400 naming where", async () => {
    // spans-bulk's links are free-form: {spans: [{links: [X]}]} puts X four levels down.
    const at = await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans: [bulkSpan(hex(16), hex(8), { links: [nested(MAX_JSON_DEPTH - 4)] })] } });
    expect(at.status).toBe(201);
    const over = await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans: [bulkSpan(hex(16), hex(8), { links: [nested(MAX_JSON_DEPTH - 3)] })] } });
    expect(over.status).toBe(400);
    expect((await json(over)).message).toBe(`spans[0].links[0]${".a".repeat(8)}.…: nests deeper than ${MAX_JSON_DEPTH} levels (objects and arrays)`);
    // The same on every route with a JSON body, whichever field holds the value.
    for (const [path, body] of [
      ["/log-request", logBody({ metadata: { deep: nested(200) } })],
      ["/reports", { dataset_group_id: 1, columns: [{ column_type: "COUNT", name: "c", configuration: { extra: nested(2000) } }] }],
      ["/log-request", logBody({ request_response: nested(1000) })],
      ["/rest/workflows", { name: "deep", nodes: [{ name: "n", node_type: "VARIABLE", configuration: { value: { type: "json", value: nested(500) } } }] }],
      ["/api/public/v2/env-vars", { key: "K", value: "v", extra: nested(MAX_JSON_DEPTH) }],
    ] as const) {
      const res = await call(path, { method: "POST", key: ws.key, json: body });
      const answer = await json(res);
      expect(res.status, `${path} ${JSON.stringify(answer).slice(0, 200)}`).toBe(400);
      expect(answer.message, path).toMatch(new RegExp(`nests deeper than ${MAX_JSON_DEPTH} levels`));
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM env_vars WHERE workspace_id = ? AND key = 'K'").bind(ws.workspaceId).first("n")).toBe(0);
  });

  it("a body of a hundred thousand brackets is measured, not a stack overflow", async () => {
    const text = `{"spans": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const res = await call("/spans-bulk", { method: "POST", key: ws.key, body: text, headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(400);
    expect(tooDeepAt(JSON.parse(text), 64)).toEqual(["spans", ...Array(63).fill(0)]);
  });
});
