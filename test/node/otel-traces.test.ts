// Real OpenTelemetry clients against a real `wrangler dev`: the OpenTelemetry JS SDK's own OTLP/HTTP
// exporters (protobuf and JSON, gzip on and off), and the Vercel AI SDK's telemetry calling a fake
// OpenAI-compatible provider served here, the official promptlayer SDK with enableTracing (its
// exporter posts each finished span to /spans-bulk), and @opentelemetry/instrumentation-openai
// around the openai client, its message events sent by the official OTLP logs exporters to /v1/logs.
// Each trace is read back through the API with its logs.
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OpenAIInstrumentation } from "@opentelemetry/instrumentation-openai";
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from "@opentelemetry/sdk-logs";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText } from "ai";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedApi } from "./helpers/shared-api";
import { FAKE_USAGE, setEnv, startFakeProviders, type FakeProviders } from "./helpers/fake-providers";
import { searchUntil } from "./search-until";

const require = createRequire(import.meta.url);
const { PromptLayer } = require("promptlayer") as typeof import("promptlayer");

const api = sharedApi("otel-traces");
beforeAll(() => {
  // What an instrumented app sets up: the active span follows async calls, so nested spans share a trace.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

async function getApi(path: string) {
  const res = await fetch(`${api.url}${path}`, { headers: { "X-API-KEY": api.key } });
  return { status: res.status, body: (await res.json()) as any };
}

/** Polls until the trace has `count` spans (exports are asynchronous even after forceFlush resolves on some paths). */
async function traceWith(traceId: string, count: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { status, body } = await getApi(`/api/public/v2/traces/${traceId}`);
    if (status === 200 && body.spans.length >= count) return body;
    if (Date.now() > deadline) throw new Error(`trace ${traceId}: ${status} ${JSON.stringify(body).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function providerWith(exporter: SpanExporter) {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "otel-test", "user.id": "resource-user" }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
}

const exporters = {
  "protobuf": (gzip: boolean) => new ProtoExporter({ url: `${api.url}/v1/traces`, headers: { "X-API-KEY": api.key }, compression: (gzip ? "gzip" : "none") as never }),
  "JSON": (gzip: boolean) => new JsonExporter({ url: `${api.url}/v1/traces`, headers: { "x-api-key": api.key }, compression: (gzip ? "gzip" : "none") as never }),
};

describe("the OpenTelemetry JS SDK's OTLP/HTTP exporters", () => {
  for (const [encoding, make] of Object.entries(exporters)) {
    for (const gzip of [false, true]) {
      it(`${encoding}${gzip ? " with gzip" : ""}: a trace of two spans, the GenAI one a request log`, async () => {
        const provider = providerWith(make(gzip));
        const tracer = provider.getTracer("otel-test", "1.0.0");
        const parent = tracer.startSpan("handle request", { kind: SpanKind.SERVER });
        const child = tracer.startSpan(
          "chat gpt-4o-mini",
          {
            kind: SpanKind.CLIENT,
            attributes: {
              "gen_ai.operation.name": "chat",
              "gen_ai.provider.name": "openai",
              "gen_ai.request.model": "gpt-4o-mini",
              "gen_ai.request.temperature": 0.2,
              "gen_ai.usage.input_tokens": 11,
              "gen_ai.usage.output_tokens": 7,
              "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: `hello over ${encoding}` }] }]),
              "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "hi there" }], finish_reason: "stop" }]),
              "gen_ai.conversation.id": "conv-1",
              "promptlayer.metadata.team": "search",
            },
          },
          trace.setSpan(ROOT_CONTEXT, parent),
        );
        child.setStatus({ code: SpanStatusCode.OK });
        child.end();
        parent.end();
        await provider.forceFlush();
        const traceId = parent.spanContext().traceId;
        const got = await traceWith(traceId, 2);
        const byName = Object.fromEntries(got.spans.map((s: any) => [s.name, s]));
        expect(byName["chat gpt-4o-mini"].parent_id).toBe(parent.spanContext().spanId);
        expect(byName["handle request"].request_log_id).toBeNull();
        expect(byName["chat gpt-4o-mini"].resource).toMatchObject({ "service.name": "otel-test" });
        const logId = byName["chat gpt-4o-mini"].request_log_id;
        expect(logId).toEqual(expect.any(Number));
        const { body: log } = await getApi(`/api/public/v2/requests/${logId}`);
        expect(log).toMatchObject({
          provider: "openai",
          model: "gpt-4o-mini",
          input_tokens: 11,
          output_tokens: 7,
          trace_id: traceId,
          metadata: { conversation_id: "conv-1", team: "search", user_id: "resource-user" },
        });
        expect(JSON.stringify(log.input)).toContain(`hello over ${encoding}`);
        expect(JSON.stringify(log.output)).toContain("hi there");
        await provider.shutdown();
      });
    }
  }

  it("a span sent again by a retrying exporter makes no second log", async () => {
    const exporter = exporters.protobuf(false);
    const provider = providerWith(exporter);
    const span = provider.getTracer("t").startSpan("chat m", { attributes: { "gen_ai.request.model": "m", "gen_ai.provider.name": "openai" } });
    span.end();
    await provider.forceFlush();
    const traceId = span.spanContext().traceId;
    await traceWith(traceId, 1);
    // The same finished span exported again, as a retry would.
    const second = exporters.protobuf(true);
    await new Promise<void>((resolve) => second.export([span as never], () => resolve()));
    const { body } = await getApi(`/api/public/v2/traces/${traceId}`);
    expect(body.spans).toHaveLength(1);
    const res = await fetch(`${api.url}/api/public/v2/requests/search`, {
      method: "POST",
      headers: { "X-API-KEY": api.key, "Content-Type": "application/json" },
      body: JSON.stringify({ filter_group: { logic: "AND", filters: [{ field: "trace_id", operator: "is", value: traceId }] } }),
    });
    expect(((await res.json()) as any).items).toHaveLength(1);
    await provider.shutdown();
  });
});

describe("the Vercel AI SDK's telemetry", () => {
  it("generateText against a fake provider: its doGenerate span becomes the request log, the outer span does not", async () => {
    const fake = await startFakeProviders();
    const provider = providerWith(exporters.protobuf(true));
    try {
      const openai = createOpenAI({ baseURL: `${fake.url}/v1`, apiKey: "sk-fake" });
      const result = await generateText({
        model: openai.chat("gpt-4o-mini"),
        prompt: "Tell me about otters",
        experimental_telemetry: { isEnabled: true, tracer: provider.getTracer("ai"), functionId: "otter-facts", metadata: { plan: "pro" } },
      });
      expect(result.text).toBe("Otters hold hands.");
      await provider.forceFlush();
      // Find the trace through a log's search: the AI SDK makes its own trace id.
      const items = await searchUntil(api, { filter_group: { logic: "AND", filters: [{ field: "output_text", operator: "contains", value: "Otters hold hands" }] } });
      expect(items).toHaveLength(1);
      const { body: log } = await getApi(`/api/public/v2/requests/${items[0].id}`);
      expect(log).toMatchObject({ provider: "openai", model: "gpt-4o-mini", input_tokens: FAKE_USAGE.openai.input, output_tokens: FAKE_USAGE.openai.output });
      expect(JSON.stringify(log.input)).toContain("Tell me about otters");
      const tr = await traceWith(log.trace_id, 2);
      const names = tr.spans.map((s: any) => s.name);
      expect(names).toEqual(expect.arrayContaining(["ai.generateText", "ai.generateText.doGenerate"]));
      const withLogs = tr.spans.filter((s: any) => s.request_log_id !== null);
      expect(withLogs.map((s: any) => s.name)).toEqual(["ai.generateText.doGenerate"]);
    } finally {
      await provider.shutdown();
      await fake.close();
    }
  });
});

/** Polls a trace until one of its spans matches (the SDK exports spans without waiting for the answer). */
async function findSpans(filter: (s: any) => boolean, traceId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await getApi(`/api/public/v2/traces/${traceId}`);
    if (status === 200 && body.spans.some(filter)) return body;
    if (Date.now() > deadline) throw new Error(`trace ${traceId}: ${status} ${JSON.stringify(body).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the promptlayer SDK with enableTracing", () => {
  let fake: FakeProviders;
  let restoreEnv: () => void;
  beforeAll(async () => {
    fake = await startFakeProviders();
    restoreEnv = setEnv(fake.env);
  });
  afterAll(async () => {
    restoreEnv?.();
    await fake?.close();
  });

  it("wrapWithSpan's span reaches /spans-bulk with its input and output; run() is linked to its trace", async () => {
    const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url, enableTracing: true });
    let traceId = "";
    const double = pl.wrapWithSpan("double", async (n: number) => {
      traceId = trace.getActiveSpan()!.spanContext().traceId;
      return n * 2;
    });
    expect(await double(21)).toBe(42);
    const got = await findSpans((s) => s.name === "double", traceId);
    const span = got.spans.find((s: any) => s.name === "double");
    expect(span.attributes).toMatchObject({ function_input: "[21]", function_output: "42" });
    expect(span.status.code).toBe(1);
    expect(span.resource).toMatchObject({ "service.name": "prompt-layer-js" });

    await pl.templates.publish({
      prompt_name: "traced-run",
      prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "Tell me about {animal}" }] }], input_variables: ["animal"] },
      metadata: { model: { provider: "openai", name: "gpt-4o-mini", parameters: {}, api_type: "chat-completions" } },
    } as never);
    const res = (await pl.run({ promptName: "traced-run", inputVariables: { animal: "otters" } } as never)) as any;
    expect(res.request_id).toEqual(expect.any(Number));
    // The run's log learns its trace when the "PromptLayer Run" span arrives.
    const deadline = Date.now() + 20_000;
    let log: any;
    for (;;) {
      log = (await getApi(`/api/public/v2/requests/${res.request_id}`)).body;
      if (log.trace_id || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(log.trace_id).toEqual(expect.stringMatching(/^[0-9a-f]{32}$/));
    const runTrace = await findSpans((s) => s.name === "PromptLayer Run", log.trace_id);
    const runSpan = runTrace.spans.find((s: any) => s.name === "PromptLayer Run");
    expect(runSpan.request_log_id).toBe(res.request_id);
    expect(log.span_id).toBe(runSpan.span_id);
  });
});

describe("@opentelemetry/instrumentation-openai with the official OTLP logs exporters", () => {
  const logExporters: Record<string, () => LogRecordExporter> = {
    "protobuf with gzip": () => new ProtoLogExporter({ url: `${api.url}/v1/logs`, headers: { "X-API-KEY": api.key }, compression: "gzip" as never }),
    JSON: () => new JsonLogExporter({ url: `${api.url}/v1/logs`, headers: { "x-api-key": api.key } }),
  };
  // One instrumentation for the file: its require hook patches the client when it is first loaded.
  let instrumentation: OpenAIInstrumentation;
  let OpenAI: typeof import("openai").OpenAI;
  beforeAll(() => {
    instrumentation = new OpenAIInstrumentation({ captureMessageContent: true });
    OpenAI = (require("openai") as typeof import("openai")).OpenAI;
  });
  afterAll(() => instrumentation?.disable());

  for (const [encoding, makeExporter] of Object.entries(logExporters)) {
    it(`${encoding}: a chat's span and its message records make one request log with the whole conversation`, async () => {
      const fake = await startFakeProviders();
      const tracerProvider = providerWith(exporters.protobuf(false));
      // Batched, as the SDK recommends: the records of one call go in one export, in the order emitted.
      const loggerProvider = new LoggerProvider({ resource: resourceFromAttributes({ "service.name": "otel-logs-test" }), processors: [new BatchLogRecordProcessor(makeExporter())] });
      instrumentation.setTracerProvider(tracerProvider);
      instrumentation.setLoggerProvider(loggerProvider);
      try {
        const client = new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: "sk-fake" });
        const reply = `Rainy over ${encoding}.`;
        const answer = await client.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [
            { role: "system", content: "You are terse." },
            { role: "user", content: "Weather in Paris?" },
            { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
            { role: "tool", tool_call_id: "call_1", content: "rainy, 14C" },
            { role: "user", content: `So? [[reply:${reply}]]` },
          ],
        });
        expect(answer.choices[0].message.content).toBe(reply);
        await Promise.all([loggerProvider.forceFlush(), tracerProvider.forceFlush()]);
        // The log is found by the answer's text, which only the joined records carry.
        const deadline = Date.now() + 20_000;
        let log: any = null;
        while (!log) {
          const res = await fetch(`${api.url}/api/public/v2/requests/search`, {
            method: "POST",
            headers: { "X-API-KEY": api.key, "Content-Type": "application/json" },
            body: JSON.stringify({ filter_group: { logic: "AND", filters: [{ field: "output_text", operator: "is", value: reply }] } }),
          });
          const items = ((await res.json()) as any).items;
          if (items.length > 0) log = (await getApi(`/api/public/v2/requests/${items[0].id}`)).body;
          else if (Date.now() > deadline) throw new Error(`no log answered "${reply}"`);
          else await new Promise((r) => setTimeout(r, 100));
        }
        expect(log).toMatchObject({ provider: "openai", model: "gpt-4o-mini", input_tokens: FAKE_USAGE.openai.input, output_tokens: FAKE_USAGE.openai.output });
        expect(log.input.messages).toEqual([
          { role: "system", content: [{ type: "text", text: "You are terse." }] },
          { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
          { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
          { role: "tool", content: [{ type: "text", text: "rainy, 14C" }], tool_call_id: "call_1" },
          { role: "user", content: [{ type: "text", text: `So? [[reply:${reply}]]` }] },
        ]);
        expect(log.output.messages).toEqual([{ role: "assistant", content: [{ type: "text", text: reply }] }]);
        // The trace shows the span that made the log and the six records under it.
        const tr = await traceWith(log.trace_id, 1);
        const span = tr.spans.find((s: any) => s.request_log_id === log.request_id);
        expect(span.name).toBe("chat gpt-4o-mini");
        expect(tr.logs.map((l: any) => [l.span_id, l.event_name])).toEqual([
          ...["system", "user", "assistant", "tool", "user"].map((role) => [span.span_id, `gen_ai.${role}.message`]),
          [span.span_id, "gen_ai.choice"],
        ]);
        expect(tr.logs[5].body).toMatchObject({ index: 0, finish_reason: "stop", message: { content: reply } });
        expect(tr.logs[0].resource).toMatchObject({ "service.name": "otel-logs-test" });
      } finally {
        await loggerProvider.shutdown();
        await tracerProvider.shutdown();
        await fake.close();
      }
    });
  }
});
