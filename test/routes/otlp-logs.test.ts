// POST /v1/logs: OTLP log records kept with their traces, the GenAI events among them completing the
// request log their span made whichever arrives first (the span's attributes winning), searchable by
// their text; resends change nothing; another workspace never sees or touches them; bad bodies and
// the caps refuse clearly and store nothing.
import { env } from "cloudflare:workers";
import { gzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { protobuf } from "../../src/traces/otlp";
import { encodeLogsRequest, MAX_RECORD_BYTES, MAX_RECORDS_PER_EXPORT } from "../../src/traces/otlp-logs";
import { JOIN_LIMITS } from "../../src/logs";
import { getDb } from "../../src/db/client";
import { ingestOtlp, ingestOtlpLogs } from "../../src/services/ingest/traces";
import { decodeExport } from "../../src/traces/otlp";
import { decodeLogsExport } from "../../src/traces/otlp-logs";
import { call, createWorkspace, json, logsDb, logsOf, shareLogsDb, type TestKey } from "../helpers/api";
import { indexNow } from "../helpers/logs";
import { hexOf, llm, nanos, sendSpans, str, traceExportOf } from "../helpers/otlp";

const MAX = Number(env.TRACES_MAX_BYTES);
const BASE = Date.UTC(2026, 0, 5, 9);
const bytes = (h: string) => Uint8Array.from(h.match(/../g)!.map((x) => parseInt(x, 16)));

/** A JSON value as OTLP's AnyValue (JSON mapping). */
function any(v: unknown): unknown {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (typeof v === "number") return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(any) } };
  if (v && typeof v === "object") return { kvlistValue: { values: Object.entries(v).map(([key, value]) => ({ key, value: any(value) })) } };
  return {};
}

/** A GenAI event record as @opentelemetry/instrumentation-openai emits it: the name in event.name, the body a map. */
const event = (traceId: string, spanId: string | null, name: string, body: unknown, atMs = 100) => ({
  timeUnixNano: nanos(BASE + atMs),
  severityNumber: 9,
  traceId,
  ...(spanId ? { spanId } : {}),
  attributes: [str("event.name", name), str("gen_ai.system", "openai")],
  body: any(body),
});

/**
 * A chat with a tool call, as the instrumentation records it: the request's messages, then the choice.
 * `apart`: each message a millisecond after the last (else all at one instant, as the instrumentation
 * stamps them, their order being the export's).
 */
const conversation = (traceId: string, spanId: string, apart = false) => [
  event(traceId, spanId, "gen_ai.system.message", { content: "You are terse." }),
  event(traceId, spanId, "gen_ai.user.message", { content: "Weather in Paris?" }, apart ? 101 : 100),
  event(traceId, spanId, "gen_ai.assistant.message", { tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] }, apart ? 102 : 100),
  event(traceId, spanId, "gen_ai.tool.message", { id: "call_1", content: "rainy, 14C" }, apart ? 103 : 100),
  event(traceId, spanId, "gen_ai.choice", { index: 0, finish_reason: "stop", message: { role: "assistant", content: "Rainy in Paris, bring an umbrella." } }, 900),
];

const EXPECTED_INPUT = [
  { role: "system", content: [{ type: "text", text: "You are terse." }] },
  { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
  { role: "tool", content: [{ type: "text", text: "rainy, 14C" }], tool_call_id: "call_1" },
];
const EXPECTED_OUTPUT = [{ role: "assistant", content: [{ type: "text", text: "Rainy in Paris, bring an umbrella." }] }];

const exportOf = (records: unknown[]) => ({
  resourceLogs: [{ resource: { attributes: [str("service.name", "chat-app")] }, scopeLogs: [{ scope: { name: "@opentelemetry/instrumentation-openai" }, logRecords: records }] }],
});

async function postLogs(ws: TestKey, records: unknown[], how: { protobuf?: boolean; gzip?: boolean } = {}) {
  let body: Uint8Array = new TextEncoder().encode(JSON.stringify(exportOf(records)));
  if (how.protobuf) {
    const binary = (records as Record<string, unknown>[]).map((r) => ({ ...r, traceId: bytes(r.traceId as string), ...(r.spanId ? { spanId: bytes(r.spanId as string) } : {}) }));
    body = await encodeLogsRequest(exportOf(binary));
  }
  const headers: Record<string, string> = { "Content-Type": how.protobuf ? "application/x-protobuf" : "application/json", ...(how.gzip ? { "Content-Encoding": "gzip" } : {}) };
  return call("/v1/logs", { method: "POST", key: ws.key, body: how.gzip ? gzipSync(body) : body, headers });
}

async function sendLogs(ws: TestKey, records: unknown[], how: { protobuf?: boolean; gzip?: boolean } = {}) {
  const res = await postLogs(ws, records, how);
  expect(res.status, await res.clone().text()).toBe(200);
  if (!how.protobuf) expect(await json(res)).toEqual({ partialSuccess: null });
  return res;
}

/** An LLM call's span as instrumentation-openai makes it: GenAI attributes, no message content. */
const chatSpan = (id: string, attrs: Record<string, unknown>[] = []) => ({
  id,
  name: "chat gpt-4o-mini",
  kind: 3,
  start: 0,
  end: 1000,
  attrs: [str("gen_ai.operation.name", "chat"), ...llm("gpt-4o-mini", "openai", 30, 12), ...attrs],
});

const authOf = (ws: TestKey) => ({ workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 });

const getTrace = (ws: TestKey, traceId: string) => call(`/api/public/v2/traces/${traceId}`, { key: ws.key });

async function logOfSpan(ws: TestKey, traceId: string, spanId: string) {
  const trace = await json(await getTrace(ws, traceId));
  const id = trace.spans.find((s: { span_id: string }) => s.span_id === spanId).request_log_id;
  expect(id).toEqual(expect.any(Number));
  const res = await call(`/api/public/v2/requests/${id}`, { key: ws.key });
  expect(res.status).toBe(200);
  return json(res);
}

async function searchIds(ws: TestKey, body: Record<string, unknown>): Promise<number[]> {
  const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: body });
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(200);
  return b.items.map((i: { id: number }) => i.id);
}

/** The log's content is what search reads: free text, the text filters, tool names. */
async function expectSearchable(ws: TestKey, logId: number) {
  expect(await searchIds(ws, { q: "umbrella" })).toEqual([logId]);
  expect(await searchIds(ws, { filter_group: { logic: "AND", filters: [{ field: "input_text", operator: "contains", value: "Weather in Paris" }] } })).toEqual([logId]);
  expect(await searchIds(ws, { filter_group: { logic: "AND", filters: [{ field: "output_text", operator: "contains", value: "bring an umbrella" }] } })).toEqual([logId]);
  expect(await searchIds(ws, { filter_group: { logic: "AND", filters: [{ field: "tool_names", operator: "contains", value: "get_weather" }] } })).toEqual([logId]);
}

const rowsOf = async (ws: TestKey, table: string) =>
  (await (await logsDb(ws)).prepare(`SELECT count(*) AS n FROM ${table} WHERE workspace_id = ?`).bind(ws.workspaceId).first<{ n: number }>())!.n;

describe("POST /v1/logs: GenAI records complete their span's log", () => {
  it("the content they make is redacted as a log's (messages, outputs) whichever comes first, with its counts", async () => {
    const ws = await createWorkspace();
    const policy = { detectors: [{ type: "email", action: "mask" }], fields: ["messages", "outputs"] };
    expect((await call("/api/public/v2/redaction-policy", { method: "PUT", key: ws.key, json: policy })).status).toBe(200);
    const records = (t: string, s: string) => [
      event(t, s, "gen_ai.user.message", { content: "Mail ada@example.com please" }),
      event(t, s, "gen_ai.choice", { index: 0, finish_reason: "stop", message: { role: "assistant", content: "Sent to ada@example.com." } }, 900),
    ];
    const [t1, s1, t2, s2] = [hexOf(32), hexOf(16), hexOf(32), hexOf(16)];
    await sendLogs(ws, records(t1, s1));
    await sendSpans(ws, t1, BASE, [chatSpan(s1)]);
    await sendSpans(ws, t2, BASE, [chatSpan(s2)]);
    await sendLogs(ws, records(t2, s2));
    for (const [t, s] of [[t1, s1], [t2, s2]]) {
      const log = await logOfSpan(ws, t, s);
      expect(JSON.stringify(log.input)).not.toContain("ada@example.com");
      expect(JSON.stringify(log.output)).not.toContain("ada@example.com");
      expect(log.input.messages[0].content[0].text).toBe("Mail [EMAIL] please");
      expect(log.output.messages[0].content[0].text).toBe("Sent to [EMAIL].");
      expect(log.redactions).toEqual({ email: 2 });
    }
  });

  it("records before their span (JSON): the log is made with the conversation, the tool call and the choice, and search finds it", async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    await sendLogs(ws, conversation(t, s));
    await sendSpans(ws, t, BASE, [chatSpan(s)]);
    const log = await logOfSpan(ws, t, s);
    expect(log.input.messages).toEqual(EXPECTED_INPUT);
    expect(log.output.messages).toEqual(EXPECTED_OUTPUT);
    expect(log).toMatchObject({ model: "gpt-4o-mini", input_tokens: 30, output_tokens: 12, trace_id: t, span_id: s });
    // Searchable once indexed, as any new log is (a few seconds after its write).
    await indexNow();
    await expectSearchable(ws, log.request_id);
  });

  it("records after their span (protobuf, gzip): the indexed log made without messages takes them in, its search rows with it at once", async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    await sendSpans(ws, t, BASE, [chatSpan(s)]);
    await indexNow();
    const before = await logOfSpan(ws, t, s);
    expect(before.input.messages).toEqual([]);
    expect(await searchIds(ws, { q: "umbrella" })).toEqual([]);
    // The request's messages in one export, the choice in another (as a batching exporter may split them).
    const [request, choice] = [conversation(t, s).slice(0, 4), conversation(t, s).slice(4)];
    const res = await sendLogs(ws, request, { protobuf: true, gzip: true });
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    expect(new Uint8Array(await res.arrayBuffer())).toHaveLength(0);
    await sendLogs(ws, choice, { protobuf: true });
    const log = await logOfSpan(ws, t, s);
    expect(log.request_id).toBe(before.request_id);
    expect(log.input.messages).toEqual(EXPECTED_INPUT);
    expect(log.output.messages).toEqual(EXPECTED_OUTPUT);
    await expectSearchable(ws, log.request_id);
    const facets = await call("/api/public/v2/requests/suggestions?field=tool_names&include_counts=true", { key: ws.key });
    expect((await json(facets)).counts).toEqual({ get_weather: 1 });
  });

  it("records joined to a log the indexer has not seen yet: it indexes the joined content, once", async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    // Through the services (no index announcement is sent), so the log stays unindexed until indexNow.
    const store = await logsOf(ws);
    const spans = await decodeExport(new TextEncoder().encode(JSON.stringify(traceExportOf(t, BASE, [chatSpan(s)]))), "json");
    await ingestOtlp(getDb(env.DB), store, authOf(ws), spans, false);
    const records = await decodeLogsExport(new TextEncoder().encode(JSON.stringify(exportOf(conversation(t, s)))), "json", BASE);
    await ingestOtlpLogs(store, authOf(ws), records);
    const log = await logOfSpan(ws, t, s);
    expect(log.input.messages).toEqual(EXPECTED_INPUT);
    // The joined content's tool name is among the log's keyed values before the indexer has seen it.
    const pending = await (await logsDb(ws))
      .prepare("SELECT extra_values, id > (SELECT indexed_to FROM log_index_state) AS waiting FROM request_logs WHERE id = ?")
      .bind(log.request_id)
      .first<{ extra_values: string; waiting: number }>();
    expect(pending!.waiting).toBe(1);
    expect(JSON.parse(pending!.extra_values)).toContainEqual(["tool", "", "get_weather"]);
    expect(await searchIds(ws, { q: "umbrella" })).toEqual([]);
    await indexNow();
    await expectSearchable(ws, log.request_id);
    const facets = await call("/api/public/v2/requests/suggestions?field=tool_names&include_counts=true", { key: ws.key });
    expect((await json(facets)).counts).toEqual({ get_weather: 1 });
  });

  it("span and records sent at once, each record its own export, for several calls: every log ends with its whole conversation, in time order", async () => {
    const ws = await createWorkspace();
    const calls = Array.from({ length: 6 }, () => [hexOf(32), hexOf(16)] as const);
    await Promise.all(
      calls.flatMap(([t, s]) => {
        const records = conversation(t, s, true).reverse();
        return [sendSpans(ws, t, BASE, [chatSpan(s)]), ...records.map((r) => sendLogs(ws, [r]))];
      }),
    );
    for (const [t, s] of calls) {
      const log = await logOfSpan(ws, t, s);
      expect(log.input.messages).toEqual(EXPECTED_INPUT);
      expect(log.output.messages).toEqual(EXPECTED_OUTPUT);
    }
    await indexNow();
    expect((await searchIds(ws, { q: "umbrella" })).length).toBe(calls.length);
  });

  it("the span's own message attributes win; the side they leave empty is filled from the records", async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    const own = JSON.stringify([{ role: "user", parts: [{ type: "text", content: "from the span" }] }]);
    await sendSpans(ws, t, BASE, [chatSpan(s, [str("gen_ai.input.messages", own)])]);
    await sendLogs(ws, conversation(t, s));
    const log = await logOfSpan(ws, t, s);
    expect(log.input.messages).toEqual([{ role: "user", content: [{ type: "text", text: "from the span" }] }]);
    expect(log.output.messages).toEqual(EXPECTED_OUTPUT);
  });

  it("the newer gen_ai.client.inference.operation.details event (the LogRecord's event_name field): messages, system instructions and tools", async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    const details = {
      timeUnixNano: nanos(BASE + 950),
      traceId: t,
      spanId: s,
      eventName: "gen_ai.client.inference.operation.details",
      attributes: [
        { key: "gen_ai.system_instructions", value: any([{ type: "text", content: "Be brief." }]) },
        { key: "gen_ai.input.messages", value: any([{ role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] }]) },
        { key: "gen_ai.output.messages", value: any([{ role: "assistant", parts: [{ type: "tool_call", id: "c9", name: "get_weather", arguments: { city: "Paris" } }], finish_reason: "tool_call" }]) },
        { key: "gen_ai.tool.definitions", value: any([{ type: "function", name: "get_weather", description: "Weather by city", parameters: { type: "object" } }]) },
      ],
    };
    await sendSpans(ws, t, BASE, [chatSpan(s)]);
    await sendLogs(ws, [details], { protobuf: true });
    const log = await logOfSpan(ws, t, s);
    expect(log.input.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    ]);
    expect(log.input.tools).toEqual([{ type: "function", function: { name: "get_weather", description: "Weather by city", parameters: { type: "object" } } }]);
    expect(log.output.messages).toEqual([{ role: "assistant", content: null, tool_calls: [{ id: "c9", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] }]);
  });

  it("is idempotent: an export sent again stores nothing and changes nothing; two identical records of one export are both kept", async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    const yes = event(t, s, "gen_ai.user.message", { content: "yes" });
    const records = [yes, event(t, s, "gen_ai.assistant.message", { content: "Sure?" }), yes];
    await sendSpans(ws, t, BASE, [chatSpan(s)]);
    await sendLogs(ws, records);
    const first = await logOfSpan(ws, t, s);
    expect(first.input.messages.map((m: { content: { text: string }[] }) => m.content[0].text)).toEqual(["yes", "Sure?", "yes"]);
    const revision = async () =>
      (await (await logsDb(ws)).prepare("SELECT revision AS r FROM request_logs WHERE id = ?").bind(first.request_id).first<{ r: number }>())!.r;
    const rev = await revision();
    await sendLogs(ws, records);
    await sendLogs(ws, records, { protobuf: true, gzip: true });
    expect(await rowsOf(ws, "trace_log_records")).toBe(3);
    expect(await revision()).toBe(rev);
    expect(await logOfSpan(ws, t, s)).toEqual(first);
    // The span sent again makes no second log and leaves the joined one as it is.
    await sendSpans(ws, t, BASE, [chatSpan(s)]);
    expect(await logOfSpan(ws, t, s)).toEqual(first);
    expect((await json(await getTrace(ws, t))).logs).toHaveLength(3);
  });
});

describe("POST /v1/logs: records kept with their trace", () => {
  it("records outside a span, of a span that is no LLM call, of a span not yet sent: all in the trace's `logs`; a trace of records alone is readable", async () => {
    const ws = await createWorkspace();
    const [t, llmSpan, plain, missing] = [hexOf(32), hexOf(16), hexOf(16), hexOf(16)];
    const appLog = { timeUnixNano: nanos(BASE + 10), severityNumber: 17, severityText: "ERROR", traceId: t, body: any("cache miss"), attributes: [str("code.function", "lookup")] };
    await sendLogs(ws, [appLog, event(t, plain, "gen_ai.user.message", { content: "not a call" }, 20), event(t, missing, "gen_ai.user.message", { content: "no span yet" }, 30)]);
    // Records alone: the trace answers with no spans and its records.
    const alone = await json(await getTrace(ws, t));
    expect(alone.spans).toEqual([]);
    expect(alone.logs.map((l: { span_id: string | null; body: unknown }) => [l.span_id, l.body])).toEqual([
      [null, "cache miss"],
      [plain, { content: "not a call" }],
      [missing, { content: "no span yet" }],
    ]);
    expect(alone.logs[0]).toMatchObject({
      time: new Date(BASE + 10).toISOString(),
      time_unix_ms: BASE + 10,
      severity_number: 17,
      severity_text: "ERROR",
      event_name: null,
      attributes: { "code.function": "lookup" },
      resource: { "service.name": "chat-app" },
      scope: { name: "@opentelemetry/instrumentation-openai", version: null },
      flags: 0,
    });
    // A plain span with GenAI records does not become a call; the LLM span's log is left alone by others' records.
    await sendSpans(ws, t, BASE, [{ id: plain, name: "handle request", start: 0, end: 2000 }, chatSpan(llmSpan)]);
    const trace = await json(await getTrace(ws, t));
    expect(trace.spans.find((s: { span_id: string }) => s.span_id === plain).request_log_id).toBeNull();
    expect((await logOfSpan(ws, t, llmSpan)).input.messages).toEqual([]);
    expect(trace.logs).toHaveLength(3);
    expect(trace.logs_truncated).toBe(false);
  });

  it("another workspace's records, under the same trace and span ids, neither show in nor change the owner's trace and log", async () => {
    const owner = await createWorkspace();
    const other = await createWorkspace();
    await shareLogsDb(other, owner);
    const [t, s] = [hexOf(32), hexOf(16)];
    await sendSpans(owner, t, BASE, [chatSpan(s)]);
    await sendLogs(other, conversation(t, s));
    await indexNow();
    expect((await logOfSpan(owner, t, s)).input.messages).toEqual([]);
    expect((await json(await getTrace(owner, t))).logs).toEqual([]);
    expect(await searchIds(owner, { q: "umbrella" })).toEqual([]);
    // The other workspace reads its own records under that trace id, and no span of the owner's.
    const theirs = await json(await getTrace(other, t));
    expect(theirs.spans).toEqual([]);
    expect(theirs.logs).toHaveLength(5);
    // The owner's records join the owner's log only.
    await sendLogs(owner, conversation(t, s));
    const joined = await logOfSpan(owner, t, s);
    expect(joined.input.messages).toEqual(EXPECTED_INPUT);
    expect(await searchIds(owner, { q: "umbrella" })).toEqual([joined.request_id]);
    expect(await searchIds(other, { q: "umbrella" })).toEqual([]);
  });
});

describe("POST /v1/logs: bad bodies and caps", () => {
  it("415 for another content type or encoding, 400 for a body that is not an export, 401 without a key: nothing stored", async () => {
    const ws = await createWorkspace();
    const t = hexOf(32);
    const valid = JSON.stringify(exportOf(conversation(t, hexOf(16))));
    const post = (body: BodyInit, headers: Record<string, string>, key: string | null = ws.key) => call("/v1/logs", { method: "POST", key: key ?? undefined, body, headers });
    const cases: [Response, number, string][] = [
      [await post(valid, { "Content-Type": "text/plain" }), 415, "unsupported_media_type"],
      [await post(valid, { "Content-Type": "application/json", "Content-Encoding": "br" }), 415, "unsupported_media_type"],
      [await post("{not json", { "Content-Type": "application/json" }), 400, "validation_error"],
      [await post("[1,2]", { "Content-Type": "application/json" }), 400, "validation_error"],
      [await post(Uint8Array.from([0x0a, 0xff, 0xff, 0x01]), { "Content-Type": "application/x-protobuf" }), 400, "validation_error"],
      [await post(valid, { "Content-Type": "application/json", "Content-Encoding": "gzip" }), 400, "validation_error"],
      [await post(valid, { "Content-Type": "application/json" }, null), 401, "unauthorized"],
    ];
    for (const [res, status, error] of cases) {
      expect(res.status).toBe(status);
      expect(await json(res)).toMatchObject({ success: false, error });
    }
    expect(await rowsOf(ws, "trace_log_records")).toBe(0);
    expect((await getTrace(ws, t)).status).toBe(404);
  });

  it("records refused one by one in partialSuccess (no trace id, a bad span id, over the record cap), the rest stored; at the cap a record is taken", async () => {
    const ws = await createWorkspace();
    const t = hexOf(32);
    const sized = (text: string) => ({ timeUnixNano: nanos(BASE), traceId: t, attributes: [str("k", text)] });
    const atCap = "x".repeat(MAX_RECORD_BYTES - '{"k":""}'.length - "null".length);
    const res = await postLogs(ws, [{ ...event(t, null, "gen_ai.user.message", { content: "no trace" }), traceId: "" }, { ...event(t, "xyz", "x", {}) }, sized(atCap), sized(`${atCap}x`)]);
    expect(res.status).toBe(200);
    const { partialSuccess } = await json(res);
    expect(partialSuccess.rejectedLogRecords).toBe("3");
    expect(partialSuccess.errorMessage).toContain("3 log records rejected");
    expect(partialSuccess.errorMessage).toContain("without a trace id");
    expect(partialSuccess.errorMessage).toContain("spanId must be 16 hex digits");
    expect(partialSuccess.errorMessage).toContain(`over the ${MAX_RECORD_BYTES} a record may hold`);
    const trace = await json(await getTrace(ws, t));
    expect(trace.logs.map((l: { attributes: { k: string } }) => l.attributes.k.length)).toEqual([atCap.length]);
    // In protobuf, the answer is an ExportLogsServiceResponse with the same count and reasons.
    const proto = await postLogs(ws, [{ ...event(t, null, "gen_ai.user.message", { content: "no span id is fine" }), spanId: hexOf(16).slice(0, 8) }], { protobuf: true });
    const answer = (await protobuf()).logs.v1.ExportLogsServiceResponse.decode(new Uint8Array(await proto.arrayBuffer())) as { partialSuccess: { rejectedLogRecords: unknown; errorMessage: string } };
    expect(Number(answer.partialSuccess.rejectedLogRecords)).toBe(1);
    expect(answer.partialSuccess.errorMessage).toContain("spanId must be 8 bytes, not 4");
  });

  it(`an export of more than ${MAX_RECORDS_PER_EXPORT} records is a 413 storing nothing; a body over TRACES_MAX_BYTES is a 413 before it is read whole`, async () => {
    const ws = await createWorkspace();
    const t = hexOf(32);
    const tooMany = Array.from({ length: MAX_RECORDS_PER_EXPORT + 1 }, (_, i) => ({ timeUnixNano: String(BigInt(BASE) * 1_000_000n + BigInt(i)), traceId: t }));
    const many = await postLogs(ws, tooMany);
    expect(many.status).toBe(413);
    expect((await json(many)).message).toContain(`over the ${MAX_RECORDS_PER_EXPORT} one export may`);
    expect(await rowsOf(ws, "trace_log_records")).toBe(0);
    // A gzip body that inflates past the cap is refused once it does.
    const bomb = gzipSync(new Uint8Array(MAX + 1).fill(0x20));
    const big = await call("/v1/logs", { method: "POST", key: ws.key, body: bomb, headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" } });
    expect(big.status).toBe(413);
    expect(await json(big)).toMatchObject({ error: "payload_too_large" });
    // At the cap the body is read (here: whitespace around an empty export); one byte more is a 413.
    const padded = JSON.stringify(exportOf([]));
    const sized = (n: number) => call("/v1/logs", { method: "POST", key: ws.key, body: padded + " ".repeat(n - padded.length), headers: { "Content-Type": "application/json" } });
    expect((await sized(MAX)).status).toBe(200);
    expect((await sized(MAX + 1)).status).toBe(413);
  }, 120_000);
});

describe("POST /v1/logs: what a log takes in", () => {
  it(`a log takes in its span's first ${JOIN_LIMITS.records} records and ${JOIN_LIMITS.bytes} bytes of them, oldest first; every record stays in the trace`, async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    await sendSpans(ws, t, BASE, [chatSpan(s)]);
    const many = Array.from({ length: JOIN_LIMITS.records + 1 }, (_, i) => event(t, s, "gen_ai.user.message", { content: `m${i}` }, i));
    await sendLogs(ws, many);
    const texts = (await logOfSpan(ws, t, s)).input.messages.map((m: { content: { text: string }[] }) => m.content[0].text);
    expect(texts).toHaveLength(JOIN_LIMITS.records);
    expect(texts.at(-1)).toBe(`m${JOIN_LIMITS.records - 1}`);
    expect((await json(await getTrace(ws, t))).logs).toHaveLength(JOIN_LIMITS.records + 1);

    // Two records of MAX_RECORD_BYTES each fill the byte budget exactly: both taken, the next one not.
    const [t2, s2] = [hexOf(32), hexOf(16)];
    const attributes = JSON.stringify({ "event.name": "gen_ai.user.message", "gen_ai.system": "openai" }).length;
    const fill = (c: string) => "x".repeat(MAX_RECORD_BYTES - attributes - JSON.stringify({ content: "" }).length).replace(/^x/, c);
    expect(2 * MAX_RECORD_BYTES).toBe(JOIN_LIMITS.bytes);
    await sendSpans(ws, t2, BASE, [chatSpan(s2)]);
    await sendLogs(ws, [event(t2, s2, "gen_ai.user.message", { content: fill("a") }, 1), event(t2, s2, "gen_ai.user.message", { content: fill("b") }, 2)]);
    await sendLogs(ws, [event(t2, s2, "gen_ai.user.message", { content: "one more" }, 3)]);
    const firstLetters = (await logOfSpan(ws, t2, s2)).input.messages.map((m: { content: { text: string }[] }) => m.content[0].text[0]);
    expect(firstLetters).toEqual(["a", "b"]);
    expect((await json(await getTrace(ws, t2))).logs).toHaveLength(3);
  }, 120_000);
});

describe("POST /v1/logs in the OpenAPI document", () => {
  it("is declared as /v1/traces is, with both encodings and the refusals", async () => {
    const doc = await json(await call("/openapi.json"));
    const op = doc.paths["/v1/logs"].post;
    expect(Object.keys(op.requestBody.content).sort()).toEqual(["application/json", "application/x-protobuf"]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "413", "415"]));
    expect(doc.components.schemas.TraceDetailResponse.properties.logs).toBeDefined();
  });
});
