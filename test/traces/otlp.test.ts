// Decoding OTLP trace exports: protobuf (the OpenTelemetry project's generated code) and OTLP JSON give
// the same spans; a span that breaks a rule is set aside with its reason, the rest are taken.
import { describe, expect, it } from "vitest";
import { decodeExport, encodeRequest, encodeResponse, MAX_ATTRIBUTE_DEPTH, OtlpFormatError } from "../../src/traces/otlp";

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const SPAN = "b7ad6b7169203331";
const PARENT = "00f067aa0ba902b7";
const bytes = (h: string) => Uint8Array.from(h.match(/../g)!.map((x) => parseInt(x, 16)));

function jsonExport(spans: Record<string, unknown>[], resource: Record<string, unknown>[] = [{ key: "service.name", value: { stringValue: "svc" } }]) {
  return { resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope: { name: "lib", version: "1.2.3" }, spans }] }] };
}

const jsonSpan = (over: Record<string, unknown> = {}) => ({
  traceId: TRACE,
  spanId: SPAN,
  parentSpanId: PARENT,
  name: "chat gpt-4o",
  kind: 3,
  startTimeUnixNano: "1700000000000000000",
  endTimeUnixNano: "1700000001500000000",
  attributes: [
    { key: "gen_ai.request.model", value: { stringValue: "gpt-4o" } },
    { key: "gen_ai.usage.input_tokens", value: { intValue: "25" } },
    { key: "big", value: { intValue: "9007199254740993" } },
    { key: "t", value: { doubleValue: 0.5 } },
    { key: "ok", value: { boolValue: true } },
    { key: "list", value: { arrayValue: { values: [{ stringValue: "a" }, { intValue: 2 }] } } },
    { key: "map", value: { kvlistValue: { values: [{ key: "k", value: { stringValue: "v" } }] } } },
  ],
  events: [{ name: "gen_ai.user.message", timeUnixNano: "1700000000100000000", attributes: [{ key: "content", value: { stringValue: "hi" } }] }],
  status: { code: 2, message: "boom" },
  ...over,
});

const enc = (s: unknown) => new TextEncoder().encode(JSON.stringify(s));

describe("OTLP trace exports", () => {
  it("JSON: ids, times, kinds, status, every attribute type, events and the resource", async () => {
    const out = await decodeExport(enc(jsonExport([jsonSpan()])), "json");
    expect(out.rejected).toEqual([]);
    expect(out.spans).toHaveLength(1);
    const { span, extras } = out.spans[0];
    expect(span).toMatchObject({ traceId: TRACE, spanId: SPAN, parentSpanId: PARENT, name: "chat gpt-4o", kind: 3, startTimeMs: 1700000000000, endTimeMs: 1700000001500 });
    expect(span.status).toEqual({ code: 2, message: "boom" });
    expect(span.attributes).toEqual({ "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 25, big: "9007199254740993", t: 0.5, ok: true, list: ["a", 2], map: { k: "v" } });
    expect(span.events).toEqual([{ name: "gen_ai.user.message", timeMs: 1700000000100, attributes: { content: "hi" } }]);
    expect(span.resource).toEqual({ "service.name": "svc" });
    expect(extras.scope).toEqual({ name: "lib", version: "1.2.3" });
  });

  it("protobuf decodes to the same spans as JSON", async () => {
    const proto = await encodeRequest(
      jsonExport([
        {
          ...jsonSpan(),
          traceId: bytes(TRACE),
          spanId: bytes(SPAN),
          parentSpanId: bytes(PARENT),
        },
      ]),
    );
    const fromProto = await decodeExport(proto, "protobuf");
    const fromJson = await decodeExport(enc(jsonExport([jsonSpan()])), "json");
    expect(fromProto).toEqual(fromJson);
  });

  it("a truncated protobuf body, or a body that is not JSON, is not an export", async () => {
    const proto = await encodeRequest(jsonExport([{ ...jsonSpan(), traceId: bytes(TRACE), spanId: bytes(SPAN), parentSpanId: bytes(PARENT) }]));
    await expect(decodeExport(proto.subarray(0, proto.length - 7), "protobuf")).rejects.toThrow(OtlpFormatError);
    await expect(decodeExport(new TextEncoder().encode("{not json"), "json")).rejects.toThrow(OtlpFormatError);
    await expect(decodeExport(enc([1, 2]), "json")).rejects.toThrow(OtlpFormatError);
  });

  it("sets aside each bad span with its reason and keeps the others", async () => {
    let deep: Record<string, unknown> = { stringValue: "x" };
    for (let i = 0; i <= MAX_ATTRIBUTE_DEPTH; i++) deep = { arrayValue: { values: [deep] } };
    const bad = [
      jsonSpan({ traceId: "abc" }),
      jsonSpan({ spanId: "0000000000000000" }),
      jsonSpan({ endTimeUnixNano: "1699999999000000000" }),
      jsonSpan({ startTimeUnixNano: "soon" }),
      jsonSpan({ attributes: [{ key: "deep", value: deep }] }),
      jsonSpan({ parentSpanId: SPAN }),
    ];
    const good = jsonSpan({ spanId: "1111111111111111" });
    const out = await decodeExport(enc(jsonExport([...bad, good])), "json");
    expect(out.spans.map((s) => s.span.spanId)).toEqual(["1111111111111111"]);
    expect(out.rejected.map((r) => r.reason)).toEqual([
      "traceId must be 32 hex digits",
      "spanId is missing or all zeros",
      "endTimeUnixNano is before startTimeUnixNano",
      "startTimeUnixNano must be a count of nanoseconds since the epoch",
      `an attribute value nests deeper than ${MAX_ATTRIBUTE_DEPTH} levels`,
      "parentSpanId is the span's own id",
    ]);
    // At the depth limit itself the value is taken.
    let ok: Record<string, unknown> = { stringValue: "x" };
    for (let i = 0; i < MAX_ATTRIBUTE_DEPTH; i++) ok = { arrayValue: { values: [ok] } };
    expect((await decodeExport(enc(jsonExport([jsonSpan({ attributes: [{ key: "deep", value: ok }] })])), "json")).rejected).toEqual([]);
  });

  it("attributes of unexpected shapes are unwrapped or dropped, never thrown", async () => {
    const out = await decodeExport(enc(jsonExport([jsonSpan({ attributes: [{ key: "a" }, { value: { stringValue: "no key" } }, { key: "b", value: { doubleValue: "NaN" } }, "junk"] })])), "json");
    expect(out.spans[0].span.attributes).toEqual({ a: null, b: "NaN" });
  });

  it("answers in the request's encoding, with partialSuccess only when spans were rejected", async () => {
    expect(await encodeResponse("json", 0, null)).toEqual({ partialSuccess: null });
    expect(await encodeResponse("json", 2, "why")).toEqual({ partialSuccess: { rejectedSpans: "2", errorMessage: "why" } });
    expect(((await encodeResponse("protobuf", 0, null)) as Uint8Array).length).toBe(0);
    expect(((await encodeResponse("protobuf", 2, "why")) as Uint8Array).length).toBeGreaterThan(0);
  });
});
