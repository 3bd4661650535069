// Traces over HTTP: OTLP exports (JSON and protobuf, gzip or not), the SDK's spans-bulk, reading a
// trace back, closing it, a trace's logs into a draft dataset, and the bad inputs of each.
import { env } from "cloudflare:workers";
import { gzipSync, strToU8 } from "fflate";
import { describe, expect, it } from "vitest";
import { encodeRequest, protobuf } from "../../src/traces/otlp";
import { spanToLog, type AttrValue, type SpanInput } from "../../src/traces/span-mapping";
import genaiAttributesOnly from "../fixtures/spans/genai-attributes-only.json";
import genaiEvents from "../fixtures/spans/genai-events.json";
import genaiMessages from "../fixtures/spans/genai-messages.json";
import openinference from "../fixtures/spans/openinference.json";
import openllmetry from "../fixtures/spans/openllmetry-indexed.json";
import vercelV4 from "../fixtures/spans/vercel-ai-v4.json";
import vercel from "../fixtures/spans/vercel-ai.json";
import { call, createWorkspace, json, shareLogsDb, type TestKey } from "../helpers/api";
import { addColumn, newSheet, rows } from "../helpers/sheet-data";
import { bulkSpan } from "../helpers/fixtures";
import { indexNow } from "../helpers/logs";

const MAX = Number(env.TRACES_MAX_BYTES);
let seq = 0;
const hexOf = (n: number, len: number) => (n.toString(16) + Date.now().toString(16) + Math.random().toString(16).slice(2)).padEnd(len, "a").slice(0, len);
const newTrace = () => hexOf(++seq, 32);
const newSpan = () => hexOf(++seq, 16);
const bytes = (h: string) => Uint8Array.from(h.match(/../g)!.map((x) => parseInt(x, 16)));

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const int = (key: string, v: number) => ({ key, value: { intValue: String(v) } });

/** An LLM span in current gen_ai attributes, and a plain parent span, of one trace. */
function spansOf(traceId: string, llmSpan: string, parentSpan: string, extra: Record<string, unknown>[] = []) {
  return [
    { traceId, spanId: parentSpan, name: "handle request", kind: 2, startTimeUnixNano: "1700000000000000000", endTimeUnixNano: "1700000003000000000", status: { code: 1 } },
    {
      traceId,
      spanId: llmSpan,
      parentSpanId: parentSpan,
      name: "chat gpt-4o",
      kind: 3,
      startTimeUnixNano: "1700000001000000000",
      endTimeUnixNano: "1700000002250000000",
      attributes: [str("gen_ai.request.model", "gpt-4o"), str("gen_ai.provider.name", "openai"), int("gen_ai.usage.input_tokens", 25), int("gen_ai.usage.output_tokens", 120), ...extra],
      status: { code: 0 },
    },
  ];
}

const exportOf = (spans: unknown[]) => ({ resourceSpans: [{ resource: { attributes: [str("service.name", "svc")] }, scopeSpans: [{ scope: { name: "test" }, spans }] }] });

function postOtlp(ws: TestKey, body: BodyInit, headers: Record<string, string>, query = "") {
  return call(`/v1/traces${query}`, { method: "POST", key: ws.key, body, headers });
}

const postJson = (ws: TestKey, exp: unknown, query = "") => postOtlp(ws, JSON.stringify(exp), { "Content-Type": "application/json" }, query);

async function trace(ws: TestKey, traceId: string) {
  return call(`/api/public/v2/traces/${traceId}`, { key: ws.key });
}

async function log(ws: TestKey, id: number) {
  const res = await call(`/api/public/v2/requests/${id}`, { key: ws.key });
  expect(res.status).toBe(200);
  return json(res);
}

async function search(ws: TestKey, filters: unknown[]) {
  const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { logic: "AND", filters } } });
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(200);
  return b;
}

describe("POST /v1/traces", () => {
  it("stores an OTLP JSON export: every span readable as a trace, the LLM span making one linked request log", async () => {
    const ws = await createWorkspace();
    const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
    const res = await postJson(ws, exportOf(spansOf(t, llm, parent)));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await json(res)).toEqual({ partialSuccess: null });

    const got = await json(await trace(ws, t));
    expect(got.trace_id).toBe(t);
    expect(got.spans.map((s: any) => [s.span_id, s.parent_id, s.name])).toEqual([
      [parent, null, "handle request"],
      [llm, parent, "chat gpt-4o"],
    ]);
    const [p, l] = got.spans;
    expect(p.request_log_id).toBeNull();
    expect(l).toMatchObject({ start_time: "2023-11-14T22:13:21.000Z", duration_ms: 1250, kind: 3, resource: { "service.name": "svc" }, scope: { name: "test", version: null } });
    expect(l.request_log_id).toEqual(expect.any(Number));
    const stored = await log(ws, l.request_log_id);
    expect(stored).toMatchObject({ model: "gpt-4o", provider: "openai", input_tokens: 25, output_tokens: 120, latency_ms: 1250, trace_id: t, span_id: llm, status: "SUCCESS" });
  });

  it("takes protobuf, gzip or not, and answers in protobuf", async () => {
    const ws = await createWorkspace();
    for (const gzip of [false, true]) {
      const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
      const spans = spansOf(t, llm, parent).map((s) => ({ ...s, traceId: bytes(s.traceId), spanId: bytes(s.spanId), ...(s.parentSpanId ? { parentSpanId: bytes(s.parentSpanId) } : {}) }));
      const proto = await encodeRequest(exportOf(spans));
      const res = await postOtlp(ws, gzip ? gzipSync(proto) : proto, { "Content-Type": "application/x-protobuf", ...(gzip ? { "Content-Encoding": "gzip" } : {}) });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/x-protobuf");
      expect(new Uint8Array(await res.arrayBuffer()).length).toBe(0);
      const got = await json(await trace(ws, t));
      expect(got.spans).toHaveLength(2);
      expect(got.spans[1].request_log_id).toEqual(expect.any(Number));
    }
  });

  it("is idempotent: an export sent twice stores each span once and makes one log", async () => {
    const ws = await createWorkspace();
    const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
    const exp = exportOf(spansOf(t, llm, parent));
    await postJson(ws, exp);
    const again = await postJson(ws, exp);
    expect(await json(again)).toEqual({ partialSuccess: null });
    // Also a span twice within one export.
    await postJson(ws, exportOf([...spansOf(t, llm, parent), ...spansOf(t, llm, parent)]));
    const got = await json(await trace(ws, t));
    expect(got.spans).toHaveLength(2);
    const found = await search(ws, [{ field: "trace_id", operator: "is", value: t }]);
    expect(found.items.map((i: any) => [i.id, i.trace_id])).toEqual([[got.spans[1].request_log_id, t]]);
  });

  it("refuses bad spans one by one in partialSuccess, storing the rest", async () => {
    const ws = await createWorkspace();
    const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
    const spans = [...spansOf(t, llm, parent), { traceId: "xyz", spanId: newSpan(), name: "bad", startTimeUnixNano: "1", endTimeUnixNano: "2" }, { traceId: t, spanId: newSpan(), name: "backwards", startTimeUnixNano: "1700000005000000000", endTimeUnixNano: "1700000002000000000" }];
    const res = await postJson(ws, exportOf(spans));
    const body = await json(res);
    expect(res.status).toBe(200);
    expect(body.partialSuccess.rejectedSpans).toBe("2");
    expect(body.partialSuccess.errorMessage).toContain("traceId must be 32 hex digits");
    expect(body.partialSuccess.errorMessage).toContain("endTimeUnixNano is before startTimeUnixNano");
    expect((await json(await trace(ws, t))).spans).toHaveLength(2);
  });

  it("a protobuf export with a refused span is answered in protobuf, the reason (a long string) included", async () => {
    const ws = await createWorkspace();
    const t = newTrace();
    const backwards = { traceId: bytes(t), spanId: bytes(newSpan()), name: "backwards", startTimeUnixNano: "1700000005000000000", endTimeUnixNano: "1700000002000000000" };
    const res = await postOtlp(ws, await encodeRequest(exportOf([backwards])), { "Content-Type": "application/x-protobuf" });
    expect(res.status).toBe(200);
    const answer = (await protobuf()).trace.v1.ExportTraceServiceResponse.decode(new Uint8Array(await res.arrayBuffer())) as { partialSuccess: { rejectedSpans: unknown; errorMessage: string } };
    expect(Number(answer.partialSuccess.rejectedSpans)).toBe(1);
    expect(answer.partialSuccess.errorMessage).toContain("endTimeUnixNano is before startTimeUnixNano");
  });

  it("answers 415 for another content type or encoding, 400 for a body that is not an export, storing nothing", async () => {
    const ws = await createWorkspace();
    const t = newTrace();
    const good = JSON.stringify(exportOf(spansOf(t, newSpan(), newSpan())));
    expect((await postOtlp(ws, good, { "Content-Type": "text/plain" })).status).toBe(415);
    expect((await postOtlp(ws, good, { "Content-Type": "application/json", "Content-Encoding": "br" })).status).toBe(415);
    const truncated = await encodeRequest(exportOf(spansOf(t, newSpan(), newSpan()).map((s) => ({ ...s, traceId: bytes(s.traceId), spanId: bytes(s.spanId), ...(s.parentSpanId ? { parentSpanId: bytes(s.parentSpanId) } : {}) }))));
    const cut = await postOtlp(ws, truncated.subarray(0, truncated.length - 9), { "Content-Type": "application/x-protobuf" });
    expect(cut.status).toBe(400);
    expect((await json(cut)).message).toContain("not a protobuf ExportTraceServiceRequest");
    expect((await postOtlp(ws, "{nope", { "Content-Type": "application/json" })).status).toBe(400);
    const notGzip = await postOtlp(ws, good, { "Content-Type": "application/json", "Content-Encoding": "gzip" });
    expect(notGzip.status).toBe(400);
    expect((await json(notGzip)).message).toContain("gzip");
    expect((await trace(ws, t)).status).toBe(404);
    expect((await call("/v1/traces", { method: "POST", body: good, headers: { "Content-Type": "application/json" } })).status).toBe(401);
  });

  it("caps the body as received and once gunzipped: at the cap it is read, one byte more is a 413 (a gzip bomb is not inflated)", async () => {
    const ws = await createWorkspace();
    const exact = '{"resourceSpans":[]}'.padEnd(MAX, " ");
    expect(exact.length).toBe(MAX);
    const atCap = await postOtlp(ws, gzipSync(strToU8(exact)), { "Content-Type": "application/json", "Content-Encoding": "gzip" });
    expect(atCap.status).toBe(200);
    const bomb = await postOtlp(ws, gzipSync(strToU8(exact + " ")), { "Content-Type": "application/json", "Content-Encoding": "gzip" });
    expect(bomb.status).toBe(413);
    expect((await json(bomb)).message).toContain("once decompressed");
    expect((await postOtlp(ws, exact, { "Content-Type": "application/json" })).status).toBe(200);
    expect((await postOtlp(ws, exact + " ", { "Content-Type": "application/json" })).status).toBe(413);
  }, 120_000);
});

describe("closing a trace", () => {
  it("201 with the closure, 409 again; later spans are refused on both paths; close_after closes on ingestion", async () => {
    const ws = await createWorkspace();
    const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
    await postJson(ws, exportOf(spansOf(t, llm, parent)));
    const closed = await call(`/api/public/v2/traces/${t}/close`, { method: "POST", key: ws.key });
    expect(closed.status).toBe(201);
    expect((await json(closed)).closure).toMatchObject({ trace_id: t, status: "closed", workspace_id: expect.any(Number) });
    expect((await call(`/api/public/v2/traces/${t}/close`, { method: "POST", key: ws.key })).status).toBe(409);

    const late = await postJson(ws, exportOf([{ traceId: t, spanId: newSpan(), name: "late", startTimeUnixNano: "1", endTimeUnixNano: "2" }]));
    const lateBody = await json(late);
    expect(lateBody.partialSuccess.rejectedSpans).toBe("1");
    expect(lateBody.partialSuccess.errorMessage).toContain(`trace ${t} is closed`);
    const bulk = await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans: [bulkSpan(t, newSpan())] } });
    expect(bulk.status).toBe(201);
    expect(await json(bulk)).toMatchObject({ spans: [], rejected_trace_ids: [t], rejection_reason: "trace_closed" });
    expect((await json(await trace(ws, t))).spans).toHaveLength(2);

    const t2 = newTrace();
    await postJson(ws, exportOf(spansOf(t2, newSpan(), newSpan())), "?close_after=true");
    expect((await call(`/api/public/v2/traces/${t2}/close`, { method: "POST", key: ws.key })).status).toBe(409);
    expect((await call(`/api/public/v2/traces/${newTrace()}/close`, { method: "POST", key: ws.key })).status).toBe(404);
  });
});

const chat = (role: string, text: string) => ({ type: "chat", messages: [{ role, content: [{ type: "text", text }] }] });

describe("POST /spans-bulk", () => {
  it("stores the SDK's spans; one with log_request makes that log, its times from the span", async () => {
    const ws = await createWorkspace();
    const [t, a, b] = [newTrace(), newSpan(), newSpan()];
    const res = await call("/spans-bulk", {
      method: "POST",
      key: ws.key,
      json: { spans: [bulkSpan(t, a), bulkSpan(t, b, { parent_id: a, name: "llm_call", log_request: { provider: "openai", model: "gpt-4o-mini", input: chat("user", "Hello!"), output: chat("assistant", "Hi"), tags: ["prod"] } })] },
    });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.spans.map((s: any) => [s.span_id, s.created])).toEqual([
      [a, true],
      [b, true],
    ]);
    expect(body.request_logs).toEqual([{ id: expect.any(Number), span_id: b, trace_id: t }]);
    const stored = await log(ws, body.request_logs[0].id);
    expect(stored).toMatchObject({ model: "gpt-4o-mini", tags: ["prod"], request_start_time: "2023-11-14T22:13:20.000Z", latency_ms: 2000, trace_id: t });
    const again = await json(await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans: [bulkSpan(t, a)] } }));
    expect(again.spans[0].created).toBe(false);
    const byName = await search(ws, [{ field: "span_name", operator: "is", value: "llm_call" }]);
    expect(byName.items.map((i: any) => i.id)).toEqual([body.request_logs[0].id]);
  });

  it("links a log made by track-request with the span id once the span arrives", async () => {
    const ws = await createWorkspace();
    const [t, s] = [newTrace(), newSpan()];
    const tracked = await call("/track-request", {
      method: "POST",
      key: ws.key,
      json: {
        function_name: "openai.chat.completions.create",
        provider_type: "openai",
        kwargs: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
        request_response: { id: "x", object: "chat.completion", created: 1, model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: "yo" }, finish_reason: "stop" }] },
        request_start_time: 1700000000,
        request_end_time: 1700000001,
        span_id: s,
      },
    });
    expect(tracked.status).toBe(200);
    const id = (await json(tracked)).request_id;
    await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans: [bulkSpan(t, s)] } });
    expect((await log(ws, id)).trace_id).toBe(t);
    expect((await json(await trace(ws, t))).spans[0].request_log_id).toBe(id);
  });

  it("refuses a bad body with a 400 naming the field, storing nothing; limits on both sides", async () => {
    const ws = await createWorkspace();
    const t = newTrace();
    const bad = async (spans: unknown[], field: string) => {
      const res = await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans } });
      const b = await json(res);
      expect(res.status, JSON.stringify(b)).toBe(400);
      expect(b.message).toContain(field);
    };
    await bad([bulkSpan(t, newSpan(), { log_request: { provider: "openai", input: chat("user", "x"), output: chat("assistant", "y") } })], "spans[0].log_request.model");
    await bad([bulkSpan(t, newSpan(), { end_time: "1600000000000000000" })], "spans[0].end_time");
    await bad([bulkSpan(t, newSpan(), { kind: "SpanKind.WHATEVER" })], "spans[0].kind");
    await bad([bulkSpan(t, "has space")], "spans[0].context.span_id");
    await bad([], "spans");
    expect((await trace(ws, t)).status).toBe(404);
    const many = Array.from({ length: 1001 }, () => bulkSpan(t, newSpan(), { attributes: {} }));
    await bad(many, "spans");
    const ok = await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans: many.slice(0, 1000) } });
    expect(ok.status).toBe(201);
    expect((await json(await trace(ws, t))).spans).toHaveLength(1000);
  }, 120_000);
});

describe("traces are the workspace's own", () => {
  it("another workspace reads, closes and adds nothing of a trace; the same ids there are its own trace", async () => {
    const [a, b] = [await createWorkspace(), await createWorkspace()];
    // One log database: both workspaces' spans of one trace id, and their logs, side by side.
    await shareLogsDb(b, a);
    const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
    await postJson(a, exportOf(spansOf(t, llm, parent)));
    expect((await trace(b, t)).status).toBe(404);
    expect((await call(`/api/public/v2/traces/${t}/close`, { method: "POST", key: b.key })).status).toBe(404);
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: b.key, json: { name: `g-${t}` } }));
    expect((await call("/api/public/v2/dataset-versions/add-trace", { method: "POST", key: b.key, json: { dataset_group_id: g.dataset_group.id, trace_id: t } })).status).toBe(404);
    expect((await search(b, [{ field: "trace_id", operator: "is", value: t }])).items).toEqual([]);
    await postJson(b, exportOf(spansOf(t, llm, parent)));
    const ours = await json(await trace(a, t));
    const theirs = await json(await trace(b, t));
    expect(theirs.spans[1].request_log_id).not.toBe(ours.spans[1].request_log_id);
    expect((await call(`/api/public/v2/traces/${t}/close`, { method: "POST", key: b.key })).status).toBe(201);
    // Closing it there leaves it open here.
    expect((await json(await postJson(a, exportOf([{ traceId: t, spanId: newSpan(), name: "more", startTimeUnixNano: "1", endTimeUnixNano: "2" }])))).partialSuccess).toBeNull();
  });
});

describe("POST /api/public/v2/dataset-versions/add-trace", () => {
  it("adds each request log of a trace (or of a span and its children) to the group's draft", async () => {
    const ws = await createWorkspace();
    const t = newTrace();
    const [root, one, two] = [newSpan(), newSpan(), newSpan()];
    const llm = (spanId: string, parentSpanId: string, model: string) => ({
      traceId: t,
      spanId,
      parentSpanId,
      name: `chat ${model}`,
      startTimeUnixNano: "1700000001000000000",
      endTimeUnixNano: "1700000002000000000",
      attributes: [str("gen_ai.request.model", model), str("gen_ai.provider.name", "openai")],
    });
    await postJson(ws, exportOf([{ traceId: t, spanId: root, name: "root", startTimeUnixNano: "1", endTimeUnixNano: "1700000009000000000" }, llm(one, root, "m1"), llm(two, one, "m2")]));
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: `g-${t}` } }));
    const groupId = g.dataset_group.id;
    const add = (body: Record<string, unknown>) => call("/api/public/v2/dataset-versions/add-trace", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, trace_id: t, ...body } });
    const whole = await add({});
    const w = await json(whole);
    expect(whole.status, JSON.stringify(w)).toBe(201);
    expect(w).toMatchObject({ success: true, mode: "trace", draft_dataset_id: expect.any(Number) });
    expect(w.request_log_ids).toHaveLength(2);
    const rows = await json(await call(`/api/public/v2/datasets/${w.draft_dataset_id}/rows?per_page=100`, { key: ws.key }));
    expect(rows.items ?? rows.rows ?? rows.data).toHaveLength(2);
    const sub = await json(await add({ span_id: two }));
    expect(sub).toMatchObject({ mode: "span", request_log_ids: [w.request_log_ids[1]] });
    expect((await add({ span_id: newSpan() })).status).toBe(404);
    expect((await add({ span_id: root, trace_id: newTrace() })).status).toBe(404);
    const noLogs = await add({ span_id: root });
    // The root span made no log, but its direct child did.
    expect(noLogs.status).toBe(201);
  });
});

describe("POST /api/public/v2/dataset-versions/add-trace into a sheet (the Python SDK's evaluate())", () => {
  async function tracedSheet(ws: TestKey) {
    const s = await newSheet(ws);
    const traceCol = (await addColumn(s, { title: "Trace", type: "TEXT" })).column.id;
    const t = newTrace();
    const [root, llm] = [newSpan(), newSpan()];
    await postJson(ws, exportOf([...spansOf(t, llm, root, [str("function_output", "General Kenobi.")])]));
    return { s, traceCol, t, root, llm };
  }
  const addTo = (ws: TestKey, body: Record<string, unknown>) => call("/api/public/v2/dataset-versions/add-trace", { method: "POST", key: ws.key, json: body });

  it("adds one row holding the trace's span tree in the sheet's Trace column (or a span's subtree), and answers the row", async () => {
    const ws = await createWorkspace();
    const { s, traceCol, t, root, llm } = await tracedSheet(ws);
    const res = await addTo(ws, { trace_id: t, sheet_id: s.sheetId, smart_table_id: s.tableId, metadata: { eval_name: "e" } });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({ success: true, mode: "trace", row_index: 1, row: { row_index: 1 }, request_log_ids: [expect.any(Number)] });
    const tree = body.row.cells[traceCol].value;
    expect(tree).toMatchObject({ span_id: root, name: "handle request", children: [{ span_id: llm, parent_id: root, output: "General Kenobi.", request_log_id: body.request_log_ids[0], children: [] }] });
    // Stored: the row reads back the same, and the log named is the workspace's.
    const stored = await rows(s);
    expect(stored.row_count).toBe(2);
    expect(stored.data[1].cells[traceCol].value).toEqual(tree);
    expect((await log(ws, body.request_log_ids[0])).trace_id).toBe(t);
    const sub = await json(await addTo(ws, { trace_id: t, span_id: llm, sheet_id: s.sheetId, smart_table_id: s.tableId }));
    expect(sub).toMatchObject({ mode: "span", row_index: 2 });
    expect(sub.row.cells[traceCol].value).toMatchObject({ span_id: llm, children: [] });
  });

  it("a sheet without a Trace column gets the row without it", async () => {
    const ws = await createWorkspace();
    const { t } = await tracedSheet(ws);
    const plain = await newSheet(ws);
    const res = await addTo(ws, { trace_id: t, sheet_id: plain.sheetId, smart_table_id: plain.tableId });
    expect(res.status).toBe(201);
    expect((await json(res)).row.cells[plain.columnA].value).toBeNull();
  });

  it("400 for a body naming no target, both, or a sheet without its table; 404 for another workspace's sheet, an unknown trace or span; nothing is added", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const { s, t } = await tracedSheet(ws);
    const target = { sheet_id: s.sheetId, smart_table_id: s.tableId };
    for (const [body, message] of [
      [{ trace_id: t }, /^dataset_group_id: is required \(or sheet_id with smart_table_id\)/],
      [{ trace_id: t, ...target, dataset_group_id: 1 }, /^sheet_id: give dataset_group_id or sheet_id, not both/],
      [{ trace_id: t, sheet_id: s.sheetId }, /^smart_table_id: is required with sheet_id/],
      [{ trace_id: t, sheet_id: "nope", smart_table_id: s.tableId }, /^sheet_id: must be a UUID/],
      [{ trace_id: t, ...target, metadata: "x" }, /^metadata: must be an object/],
    ] as const) {
      const res = await addTo(ws, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    for (const [key, body] of [
      [other, { trace_id: t, ...target }],
      [ws, { trace_id: newTrace(), ...target }],
      [ws, { trace_id: t, span_id: newSpan(), ...target }],
      [ws, { trace_id: t, sheet_id: s.sheetId, smart_table_id: crypto.randomUUID() }],
    ] as const) {
      expect((await addTo(key, body)).status, JSON.stringify(body)).toBe(404);
    }
    // Another workspace's trace into my sheet: the trace is not found.
    const theirs = await tracedSheet(other);
    expect((await addTo(ws, { trace_id: theirs.t, ...target })).status).toBe(404);
    expect((await rows(s)).row_count).toBe(1);
  });
});

// ---- every recorded dialect, end to end ----


const fixtures: Record<string, { spans: Record<string, SpanInput> }> = {
  "genai-attributes-only.json": genaiAttributesOnly as never,
  "genai-events.json": genaiEvents as never,
  "genai-messages.json": genaiMessages as never,
  "openinference.json": openinference as never,
  "openllmetry-indexed.json": openllmetry as never,
  "vercel-ai-v4.json": vercelV4 as never,
  "vercel-ai.json": vercel as never,
};

function anyValue(v: AttrValue): Record<string, unknown> {
  if (v === null) return {};
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (typeof v === "number") return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  return { kvlistValue: { values: Object.entries(v).map(([key, x]) => ({ key, value: anyValue(x) })) } };
}
const kvs = (o: Record<string, AttrValue>) => Object.entries(o).map(([key, v]) => ({ key, value: anyValue(v) }));
const nanos = (ms: number) => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

describe("every recorded GenAI dialect through /v1/traces", () => {
  for (const [file, fixture] of Object.entries(fixtures)) {
    it(`${file}: each LLM span makes the log the mapping says, the others none`, async () => {
      const ws = await createWorkspace();
      const spans = Object.values(fixture.spans);
      const byResource = new Map<string, SpanInput[]>();
      for (const s of spans) byResource.set(JSON.stringify(s.resource), [...(byResource.get(JSON.stringify(s.resource)) ?? []), s]);
      const exp = {
        resourceSpans: [...byResource].map(([resource, list]) => ({
          resource: { attributes: kvs(JSON.parse(resource)) },
          scopeSpans: [
            {
              scope: { name: "fixture" },
              spans: list.map((s) => ({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? "",
                name: s.name,
                kind: s.kind,
                startTimeUnixNano: nanos(s.startTimeMs),
                endTimeUnixNano: nanos(s.endTimeMs),
                attributes: kvs(s.attributes),
                events: s.events.map((e) => ({ name: e.name, timeUnixNano: nanos(e.timeMs), attributes: kvs(e.attributes) })),
                status: { code: s.status.code, ...(s.status.message ? { message: s.status.message } : {}) },
              })),
            },
          ],
        })),
      };
      const res = await postJson(ws, exp);
      expect(await json(res)).toEqual({ partialSuccess: null });
      for (const s of spans) {
        const got = await json(await trace(ws, s.traceId));
        const stored = got.spans.find((x: any) => x.span_id === s.spanId);
        const expected = spanToLog(s);
        if (!expected) {
          expect(stored.request_log_id, s.name).toBeNull();
          continue;
        }
        const l = await log(ws, stored.request_log_id);
        expect(l, s.name).toMatchObject({
          provider: expected.log.provider,
          model: expected.log.model,
          input: expected.log.input,
          output: expected.log.output,
          input_tokens: expected.log.input_tokens,
          output_tokens: expected.log.output_tokens,
          status: expected.log.status,
          tags: expected.log.tags,
        });
        expect(l.metadata).toEqual(expected.log.metadata);
      }
    });
  }
});

describe("prompt links from span attributes", () => {
  it("promptlayer.prompt.name with a version or a label links the log to that version; an unknown one links nothing", async () => {
    const ws = await createWorkspace();
    const name = `traced-${newSpan()}`;
    const publish = (text: string, labels: string[] = []) =>
      call("/rest/prompt-templates", {
        method: "POST",
        key: ws.key,
        json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text }] }], input_variables: [] } }, release_labels: labels },
      });
    expect((await publish("one", ["prod"])).status).toBeLessThan(300);
    expect((await publish("two")).status).toBeLessThan(300);
    const linked = async (extra: Record<string, unknown>[]) => {
      const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
      await postJson(ws, exportOf(spansOf(t, llm, parent, extra)));
      const got = await json(await trace(ws, t));
      return log(ws, got.spans[1].request_log_id);
    };
    expect(await linked([str("promptlayer.prompt.name", name), str("promptlayer.prompt.label", "prod")])).toMatchObject({ prompt_name: name, prompt_version_number: 1 });
    expect(await linked([str("promptlayer.prompt.name", name), int("promptlayer.prompt.version", 2)])).toMatchObject({ prompt_name: name, prompt_version_number: 2 });
    const unknown = await linked([str("promptlayer.prompt.name", name), str("promptlayer.prompt.label", "nope")]);
    expect(unknown).toMatchObject({ prompt_id: null, prompt_version_number: null });
  });
});

describe("trace fields in suggestions", () => {
  it("suggests trace ids and span names of logs made from spans", async () => {
    const ws = await createWorkspace();
    const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
    await postJson(ws, exportOf(spansOf(t, llm, parent)));
    await indexNow();
    const suggest = async (field: string, prefix: string) => {
      const res = await call(`/api/public/v2/requests/suggestions?field=${field}&prefix=${encodeURIComponent(prefix)}`, { key: ws.key });
      const b = await json(res);
      expect(res.status, JSON.stringify(b)).toBe(200);
      return b;
    };
    expect(JSON.stringify(await suggest("trace_id", t.slice(0, 6)))).toContain(t);
    expect(JSON.stringify(await suggest("span_name", "chat"))).toContain("chat gpt-4o");
  });
});

describe("failed LLM spans", () => {
  it("an ERROR span makes an ERROR log whose error_type is the fitting one, its own type kept in the message", async () => {
    const ws = await createWorkspace();
    const cases: [string, string, string][] = [
      ["RateLimitError", "429 Rate limit reached", "PROVIDER_RATE_LIMIT"],
      ["APITimeoutError", "Request timed out.", "PROVIDER_TIMEOUT"],
      ["ValueError", "bad things", "PROVIDER_ERROR"],
    ];
    for (const [type, message, expected] of cases) {
      const [t, llm, parent] = [newTrace(), newSpan(), newSpan()];
      const spans = spansOf(t, llm, parent, [str("error.type", type)]);
      (spans[1] as Record<string, unknown>).status = { code: 2, message };
      await postJson(ws, exportOf(spans));
      const got = await json(await trace(ws, t));
      const l = await log(ws, got.spans[1].request_log_id);
      expect(l).toMatchObject({ status: "ERROR", error_type: expected });
      expect(l.error_message).toContain(type);
      expect(l.error_message).toContain(message);
    }
  });
});

describe("a large trace", () => {
  it("answers its first 5,000 spans: at 5,000 all of them, one more and truncated says so", async () => {
    const ws = await createWorkspace();
    const t = newTrace();
    const send = async (n: number, offset: number) => {
      const spans = Array.from({ length: n }, (_, i) => bulkSpan(t, newSpan(), { attributes: {}, start_time: String(1700000000000000000n + BigInt(offset + i) * 1000000n), end_time: "1800000000000000000" }));
      expect((await call("/spans-bulk", { method: "POST", key: ws.key, json: { spans } })).status).toBe(201);
    };
    for (let i = 0; i < 5; i++) await send(1000, i * 1000);
    const full = await json(await trace(ws, t));
    expect(full.spans).toHaveLength(5000);
    expect(full.truncated).toBe(false);
    await send(1, 5000);
    const over = await json(await trace(ws, t));
    expect(over.spans).toHaveLength(5000);
    expect(over.truncated).toBe(true);
    expect(over.spans[4999].start_time_unix_ms).toBe(1700000000000 + 4999);
  }, 120_000);
});
