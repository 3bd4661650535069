// Fake LLM providers on loopback for the node tests: OpenAI-compatible chat completions, legacy
// completions and responses, and Anthropic's messages (direct and on Vertex AI), each answered whole or streamed as
// server-sent events the way the real APIs stream them. The official clients (JavaScript and Python)
// reach them through OPENAI_BASE_URL / ANTHROPIC_BASE_URL, so no test ever reaches a real provider.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeCall {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface FakeProviders {
  /** http://127.0.0.1:<port>: OpenAI's base URL is `${url}/v1`, Anthropic's is `url`. */
  url: string;
  calls: FakeCall[];
  /** What the provider clients read from the environment to reach these fakes. */
  env: Record<string, string>;
  close: () => Promise<void>;
}

/** The default answers and their token counts (tests assert on them). */
export const FAKE_REPLY = { openai: "Otters hold hands.", anthropic: "Bonjour!" } as const;
export const FAKE_USAGE = { openai: { input: 12, output: 5 }, anthropic: { input: 9, output: 3 } } as const;

/** `[[reply:…]]` in the last user message chooses the answer; otherwise the provider's default. */
function replyFor(messages: unknown, fallback: string): string {
  const list = Array.isArray(messages) ? messages : [];
  const last = [...list].reverse().find((m: any) => m?.role === "user");
  const content = last?.content;
  const text = typeof content === "string" ? content : Array.isArray(content) ? content.map((p: any) => p?.text ?? "").join("") : "";
  return /\[\[reply:([^\]]*)\]\]/.exec(text)?.[1] ?? fallback;
}

/** The reply cut into a few pieces, as a stream delivers it. */
const pieces = (text: string) => text.match(/\S+\s*/g) ?? [text];

function sendJson(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(value));
}

function sendEvents(res: ServerResponse, events: { event?: string; data: unknown }[]) {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ""}data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`);
  res.end();
}

function chatCompletion(res: ServerResponse, body: any) {
  const text = replyFor(body.messages, FAKE_REPLY.openai);
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: FAKE_USAGE.openai.input, completion_tokens: FAKE_USAGE.openai.output, total_tokens: FAKE_USAGE.openai.input + FAKE_USAGE.openai.output };
  const base = { id: "chatcmpl-fake", created, model: body.model, system_fingerprint: null };
  if (!body.stream) {
    return sendJson(res, 200, {
      ...base,
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: "stop", logprobs: null }],
      usage,
    });
  }
  const chunk = (delta: object, finish: string | null) => ({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  const events: { data: unknown }[] = [{ data: chunk({ role: "assistant", content: "" }, null) }];
  for (const p of pieces(text)) events.push({ data: chunk({ content: p }, null) });
  events.push({ data: chunk({}, "stop") });
  if (body.stream_options?.include_usage) events.push({ data: { ...base, object: "chat.completion.chunk", choices: [], usage } });
  events.push({ data: "[DONE]" });
  sendEvents(res, events);
}

function completion(res: ServerResponse, body: any) {
  sendJson(res, 200, {
    id: "cmpl-fake",
    object: "text_completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, text: FAKE_REPLY.openai, finish_reason: "stop", logprobs: null }],
    usage: { prompt_tokens: FAKE_USAGE.openai.input, completion_tokens: FAKE_USAGE.openai.output, total_tokens: FAKE_USAGE.openai.input + FAKE_USAGE.openai.output },
  });
}

function response(res: ServerResponse, body: any) {
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  sendJson(res, 200, {
    id: "resp_fake",
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model: body.model,
    output: [{ type: "message", id: "msg_fake", status: "completed", role: "assistant", content: [{ type: "output_text", text: replyFor(input, FAKE_REPLY.openai), annotations: [] }] }],
    usage: { input_tokens: FAKE_USAGE.openai.input, output_tokens: FAKE_USAGE.openai.output, total_tokens: FAKE_USAGE.openai.input + FAKE_USAGE.openai.output },
  });
}

function anthropicMessage(res: ServerResponse, body: any) {
  const text = replyFor(body.messages, FAKE_REPLY.anthropic);
  const message = { id: "msg_fake", type: "message", role: "assistant", model: body.model, stop_sequence: null };
  if (!body.stream) {
    return sendJson(res, 200, {
      ...message,
      content: [{ type: "text", text }],
      stop_reason: "end_turn",
      usage: { input_tokens: FAKE_USAGE.anthropic.input, output_tokens: FAKE_USAGE.anthropic.output },
    });
  }
  sendEvents(res, [
    { event: "message_start", data: { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { input_tokens: FAKE_USAGE.anthropic.input, output_tokens: 1 } } } },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
    ...pieces(text).map((p) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } } })),
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: FAKE_USAGE.anthropic.output } } },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

/** OpenAI-compatible and Anthropic-compatible endpoints on one loopback server; every call is recorded. */
export async function startFakeProviders(): Promise<FakeProviders> {
  const calls: FakeCall[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0];
      let body: any = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        return sendJson(res, 400, { error: { message: "the body is not JSON" } });
      }
      // What the fakes were sent so far, for a test in another process than the fakes (test/node/global-setup.ts serves them).
      if (path === "/__calls" && req.method === "GET") return sendJson(res, 200, calls);
      calls.push({ path: req.url ?? "", headers: req.headers, body });
      if (path.endsWith("/chat/completions")) return chatCompletion(res, body);
      if (path.endsWith("/completions")) return completion(res, body);
      if (path.endsWith("/responses")) return response(res, body);
      if (path.endsWith("/messages")) return anthropicMessage(res, body);
      // Anthropic on Vertex AI: the model is in the path, the body is a messages body.
      const vertex = /\/models\/([^/:]+):(?:rawPredict|streamRawPredict)$/.exec(path);
      if (vertex) return anthropicMessage(res, { ...body, model: vertex[1] });
      sendJson(res, 404, { error: { message: `no fake for ${req.url}` } });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return { url, calls, env: fakeProviderEnv(url), close: () => new Promise((r) => server.close(() => r())) };
}

/** What the provider clients read from the environment to reach the fakes served at `url`. */
export function fakeProviderEnv(url: string): Record<string, string> {
  return { OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: "sk-fake", ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "sk-ant-fake" };
}

/** Every call the fakes served at `url` (started by another process) were sent so far. */
export async function fakeCallsAt(url: string): Promise<FakeCall[]> {
  return (await fetch(`${url}/__calls`)).json() as Promise<FakeCall[]>;
}

/** Sets these variables in this process's environment (for the JavaScript clients); returns the undo. */
export function setEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
