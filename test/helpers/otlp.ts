// Traces for tests: spans sent through POST /v1/traces as OTLP JSON, with attribute builders and ids.
import { expect } from "vitest";
import { call, json, type TestKey } from "./api";

let seq = 0;
/** A fresh lowercase hex id of `len` digits, unique within the test file. */
export const hexOf = (len: number) => (++seq).toString(16).padStart(4, "0") + [...crypto.getRandomValues(new Uint8Array(len))].map((b) => (b % 16).toString(16)).join("").slice(0, len - 4);
export const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
export const int = (key: string, v: number) => ({ key, value: { intValue: String(v) } });
export const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n);

/** The GenAI attributes of an LLM call (a span with them makes a request log). */
export const llm = (model: string, provider: string, input: number, output: number) => [
  str("gen_ai.request.model", model),
  str("gen_ai.provider.name", provider),
  int("gen_ai.usage.input_tokens", input),
  int("gen_ai.usage.output_tokens", output),
];

export interface SpanSeed {
  id: string;
  parent?: string;
  name: string;
  kind?: number;
  /** Milliseconds after the trace's `base`. */
  start: number;
  end: number;
  status?: number;
  attrs?: Record<string, unknown>[];
}

/** The OTLP JSON export of one trace's spans (times relative to `base`, epoch ms). */
export function traceExportOf(traceId: string, base: number, spans: SpanSeed[]) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [str("service.name", "agent")] },
        scopeSpans: [
          {
            scope: { name: "test" },
            spans: spans.map((s) => ({
              traceId,
              spanId: s.id,
              ...(s.parent ? { parentSpanId: s.parent } : {}),
              name: s.name,
              kind: s.kind ?? 1,
              startTimeUnixNano: nanos(base + s.start),
              endTimeUnixNano: nanos(base + s.end),
              attributes: s.attrs ?? [],
              status: { code: s.status ?? 0 },
            })),
          },
        ],
      },
    ],
  };
}

/** Sends the spans of one trace (times relative to `base`, epoch ms) and expects every one stored. */
export async function sendSpans(ws: TestKey, traceId: string, base: number, spans: SpanSeed[]) {
  const res = await call("/v1/traces", { method: "POST", key: ws.key, json: traceExportOf(traceId, base, spans) });
  expect(res.status).toBe(200);
  expect(await json(res)).toEqual({ partialSuccess: null });
}
