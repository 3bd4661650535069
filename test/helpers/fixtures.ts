// Request bodies for tests.

export const text = (t: string) => [{ type: "text", text: t }];

let calls = 0;

/**
 * A log-request body. Each is a distinct call, as two real SDK calls are (their timestamps differ to
 * the microsecond): an ignored field tells it apart, since the same bytes again within ten minutes are
 * a retry and log once (docs/logging-and-search.md). A test of that rule sends one body twice itself.
 */
export function logBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    test_call: ++calls,
    provider: "openai",
    model: "gpt-4o",
    input: { type: "chat", messages: [{ role: "user", content: text("Hello!") }] },
    output: { type: "chat", messages: [{ role: "assistant", content: text("Hi there!") }] },
    request_start_time: "2024-01-15T10:30:00Z",
    request_end_time: "2024-01-15T10:30:05Z",
    ...overrides,
  };
}

/** A span as the SDK's spans-bulk sends it (an SDK run's root span unless `over` says otherwise). */
export function bulkSpan(traceId: string, spanId: string, over: Record<string, unknown> = {}) {
  return {
    name: "PromptLayer Run",
    context: { trace_id: traceId, span_id: spanId, trace_state: "" },
    kind: "SpanKind.INTERNAL",
    parent_id: null,
    start_time: "1700000000000000000",
    end_time: "1700000002000000000",
    status: { status_code: "StatusCode.OK", description: null },
    attributes: { function_input: "{}" },
    events: [],
    links: [],
    resource: { attributes: { "service.name": "prompt-layer-js" }, schema_url: "" },
    ...over,
  };
}
