// Decoding OTLP logs exports: protobuf (the OpenTelemetry project's generated code) and OTLP JSON give
// the same records, each with an identity that survives a resend; a record that breaks a rule is set
// aside with its reason, the rest are taken; too many records refuse the export.
import { describe, expect, it } from "vitest";
import { recordEvent } from "../../src/traces/log-records";
import { OtlpFormatError } from "../../src/traces/otlp";
import { decodeLogsExport, encodeLogsRequest, encodeLogsResponse, MAX_RECORD_BYTES, MAX_RECORDS_PER_EXPORT, OtlpTooManyRecords } from "../../src/traces/otlp-logs";

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const SPAN = "b7ad6b7169203331";
const NOW = 1_800_000_000_000;
const bytes = (h: string) => Uint8Array.from(h.match(/../g)!.map((x) => parseInt(x, 16)));
const enc = (s: unknown) => new TextEncoder().encode(JSON.stringify(s));
const str = (v: string) => ({ stringValue: v });
const kv = (key: string, value: unknown) => ({ key, value });

const userMessage = (over: Record<string, unknown> = {}) => ({
  timeUnixNano: "1700000000100000000",
  observedTimeUnixNano: "1700000000200000000",
  severityNumber: 9,
  severityText: "INFO",
  traceId: TRACE,
  spanId: SPAN,
  attributes: [kv("event.name", str("gen_ai.user.message")), kv("gen_ai.system", str("openai"))],
  body: { kvlistValue: { values: [kv("content", str("hello"))] } },
  ...over,
});

const exportOf = (records: unknown[]) => ({
  resourceLogs: [{ resource: { attributes: [kv("service.name", str("svc"))] }, scopeLogs: [{ scope: { name: "@opentelemetry/instrumentation-openai", version: "0.14.0" }, logRecords: records }] }],
});

describe("OTLP logs exports", () => {
  it("JSON: ids, times, severity, the event name from event.name, the body map, resource and scope", async () => {
    const out = await decodeLogsExport(enc(exportOf([userMessage()])), "json", NOW);
    expect(out.rejected).toEqual([]);
    expect(out.records).toHaveLength(1);
    const [r] = out.records;
    expect(r).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
      timeMs: 1700000000100,
      observedTimeMs: 1700000000200,
      severityNumber: 9,
      severityText: "INFO",
      eventName: "gen_ai.user.message",
      body: { content: "hello" },
      attributes: { "event.name": "gen_ai.user.message", "gen_ai.system": "openai" },
      resource: { "service.name": "svc" },
      scope: { name: "@opentelemetry/instrumentation-openai", version: "0.14.0" },
      flags: 0,
    });
    expect(r.key).toMatch(/^[0-9a-f]{64}$/);
  });

  it("protobuf decodes to the same records as JSON, the LogRecord's event_name field included", async () => {
    const withField = userMessage({ eventName: "gen_ai.choice", attributes: [] });
    const fromJson = await decodeLogsExport(enc(exportOf([userMessage(), withField])), "json", NOW);
    const proto = await encodeLogsRequest(exportOf([userMessage(), withField].map((r) => ({ ...r, traceId: bytes(TRACE), spanId: bytes(SPAN) }))));
    const fromProto = await decodeLogsExport(proto, "protobuf", NOW);
    expect(fromProto).toEqual(fromJson);
    expect(fromProto.records[1].eventName).toBe("gen_ai.choice");
  });

  it("a record without a time takes its observed time, then the time it was received; severity names read as numbers", async () => {
    const out = await decodeLogsExport(
      enc(exportOf([userMessage({ timeUnixNano: "0" }), userMessage({ timeUnixNano: undefined, observedTimeUnixNano: undefined, severityNumber: "SEVERITY_NUMBER_WARN2" })])),
      "json",
      NOW,
    );
    expect(out.records.map((r) => [r.timeMs, r.observedTimeMs, r.severityNumber])).toEqual([
      [1700000000200, 1700000000200, 9],
      [NOW, null, 14],
    ]);
  });

  it("identity: the same export decoded again gives the same keys; two identical records of one export are both kept", async () => {
    const body = enc(exportOf([userMessage(), userMessage(), userMessage({ body: { stringValue: "other" } })]));
    const a = await decodeLogsExport(body, "json", NOW);
    const b = await decodeLogsExport(body, "json", NOW + 5000);
    expect(a.records.map((r) => r.key)).toEqual(b.records.map((r) => r.key));
    expect(new Set(a.records.map((r) => r.key)).size).toBe(3);
    expect(a.records[1].key).toBe(`${a.records[0].key}:1`);
  });

  it("refuses records one by one: no trace id, a malformed span id, a body too deep or too large; at the size cap a record is taken", async () => {
    // A string attribute whose JSON makes body + attributes exactly MAX_RECORD_BYTES: {"k":"…"} and the body's null.
    const atCap = "x".repeat(MAX_RECORD_BYTES - '{"k":""}'.length - "null".length);
    let deep: unknown = str("bottom");
    for (let i = 0; i < 20; i++) deep = { arrayValue: { values: [deep] } };
    const out = await decodeLogsExport(
      enc(
        exportOf([
          userMessage({ traceId: "" }),
          userMessage({ spanId: "xyz" }),
          userMessage({ body: deep }),
          userMessage({ body: undefined, attributes: [kv("k", str(atCap))] }),
          userMessage({ body: undefined, attributes: [kv("k", str(`${atCap}x`))] }),
          "not a record",
        ]),
      ),
      "json",
      NOW,
    );
    expect(out.records).toHaveLength(1);
    expect(out.records[0].attributes.k).toBe(atCap);
    expect(out.rejected.map((r) => r.reason)).toEqual([
      expect.stringContaining("without a trace id"),
      "spanId must be 16 hex digits",
      expect.stringContaining("nests deeper than"),
      expect.stringContaining(`over the ${MAX_RECORD_BYTES}`),
      "a log record is not an object",
    ]);
  });

  it(`takes ${MAX_RECORDS_PER_EXPORT} records in one export and refuses one more whole`, async () => {
    const many = (n: number) => enc(exportOf(Array.from({ length: n }, (_, i) => ({ traceId: TRACE, timeUnixNano: String(1700000000000000000n + BigInt(i)) }))));
    expect((await decodeLogsExport(many(MAX_RECORDS_PER_EXPORT), "json", NOW)).records).toHaveLength(MAX_RECORDS_PER_EXPORT);
    await expect(decodeLogsExport(many(MAX_RECORDS_PER_EXPORT + 1), "json", NOW)).rejects.toBeInstanceOf(OtlpTooManyRecords);
  }, 60_000);

  it("a body that is not an export is a format error", async () => {
    await expect(decodeLogsExport(enc([1, 2]), "json", NOW)).rejects.toBeInstanceOf(OtlpFormatError);
    await expect(decodeLogsExport(new TextEncoder().encode("{not json"), "json", NOW)).rejects.toBeInstanceOf(OtlpFormatError);
    await expect(decodeLogsExport(Uint8Array.from([0x0a, 0xff, 0xff]), "protobuf", NOW)).rejects.toBeInstanceOf(OtlpFormatError);
  });

  it("answers ExportLogsServiceResponse: partialSuccess only when records were refused", async () => {
    expect(await encodeLogsResponse("json", 0, null)).toEqual({ partialSuccess: null });
    expect(await encodeLogsResponse("json", 2, "why")).toEqual({ partialSuccess: { rejectedLogRecords: "2", errorMessage: "why" } });
    expect((await encodeLogsResponse("protobuf", 0, null)) as Uint8Array).toHaveLength(0);
    expect(((await encodeLogsResponse("protobuf", 2, "why")) as Uint8Array).length).toBeGreaterThan(0);
  });

  it("a record reads as the event it stands for: its body's fields over its attributes; a text body is the content", () => {
    const base = { eventName: "gen_ai.tool.message", timeMs: 5, attributes: { "gen_ai.system": "openai", id: "attr" } };
    expect(recordEvent({ ...base, body: { id: "call_1", content: "42" } })).toEqual({ name: "gen_ai.tool.message", timeMs: 5, attributes: { "gen_ai.system": "openai", id: "call_1", content: "42" } });
    expect(recordEvent({ ...base, body: '{"content":"json"}' }).attributes.content).toBe("json");
    expect(recordEvent({ ...base, body: "plain text" }).attributes.content).toBe("plain text");
    expect(recordEvent({ ...base, eventName: null, body: null }).name).toBe("");
  });
});
