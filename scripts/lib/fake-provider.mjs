// The LLM provider of the browser test and the benchmarks: an OpenAI-compatible chat completions
// server on 127.0.0.1, so the playground's runs (POST /api/public/v2/prompt-runs) and the Signals
// judge reach a provider without leaving the machine. It streams its answer a word at a time with a
// pause between words (so the console can be seen streaming), counts usage, and refuses any key but
// its own. Asked for a signal verdict (the signal_verdict JSON schema), it answers one: true when the
// judged log holds "[[verdict:true]]" (or the word "refund"), with a quote from the log.

import { createServer } from "node:http";

export const FAKE_PROVIDER_KEY = "sk-browser-test";

/** Starts the server; resolves with its base URL (…/v1), the calls it received and stop(). */
export function startFakeProvider({ wordDelayMs = 120 } = {}) {
  const calls = [];
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "no such route" } }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${FAKE_PROVIDER_KEY}`) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "Incorrect API key provided" } }));
      return;
    }
    const body = JSON.parse(raw);
    calls.push(body);
    if (body.response_format?.json_schema?.name === "signal_verdict") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(verdictAnswer(body)));
      return;
    }
    const user = [...body.messages].reverse().find((m) => m.role === "user");
    const question = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
    const reply = `${body.model} answers: ${question}`;
    const usage = { prompt_tokens: JSON.stringify(body.messages).split(/\s+/).length, completion_tokens: reply.split(/\s+/).length };
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "fake", object: "chat.completion", model: body.model, choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }], usage }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (data) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const chunk = (delta, finish = null) => ({ id: "fake", object: "chat.completion.chunk", model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
    send(chunk({ role: "assistant", content: "" }));
    for (const word of reply.split(/(?<= )/)) {
      send(chunk({ content: word }));
      await new Promise((r) => setTimeout(r, wordDelayMs));
    }
    send(chunk({}, "stop"));
    if (body.stream_options?.include_usage) send({ id: "fake", object: "chat.completion.chunk", model: body.model, choices: [], usage });
    res.end("data: [DONE]\n\n");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({ baseUrl: `http://127.0.0.1:${port}/v1`, calls, stop: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

/** A chat completion holding a signal verdict about the judged log (in the last user message's <log> element). */
function verdictAnswer(body) {
  const message = String([...body.messages].reverse().find((m) => m.role === "user")?.content ?? "");
  // Only the log itself (the message repeats the statement after it, which may say "refund").
  const log = /<log>\n?([\s\S]*?)\n?<\/log>/.exec(message)?.[1] ?? message;
  const found = /\[\[verdict:true\]\]|refund/i.exec(log);
  const verdict = found
    ? { result: true, reasoning: "The log says so.", quote: log.slice(found.index, found.index + 40).split("\n")[0] }
    : { result: false, reasoning: "Nothing in the log says so.", quote: "" };
  const usage = { prompt_tokens: Math.ceil(log.length / 4) + 100, completion_tokens: 24 };
  return { id: "fake-judge", object: "chat.completion", model: body.model, choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(verdict) }, finish_reason: "stop" }], usage };
}
