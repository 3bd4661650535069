// The fake upstreams the Worker reaches in tests (miniflare's outboundService runs this in Node, inside
// the test runtime): an OpenAI-compatible provider at fake-llm.test, an HTTP echo at fake-endpoint.test
// and a webhook receiver at fake-webhook.test. Anything else is refused, so no test ever reaches the internet.
//
// fake-llm.test answers the text inside [[reply:…]] in the last user message, else "echo: <message>".
// It takes two keys: the Worker's (test-key, vitest.config.ts) and a workspace's (workspace-key),
// whose answers end in " [workspace key]" so a test can tell which key a call was sent with.

const json = (v, status = 200) => new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });

// fake-webhook.test: POST /hooks/<key>[?fail=N][&hang=1] records the request (headers and raw body)
// under <key> and answers 500 to the first N requests (hang: never answers), then 204.
// GET /inbox/<key> answers what <key> received, in order.
const inboxes = new Map();

async function fakeWebhook(request, url) {
  const inbox = /^\/inbox\/([^/]+)$/.exec(url.pathname);
  if (inbox && request.method === "GET") return json(inboxes.get(inbox[1]) ?? []);
  const hook = /^\/hooks\/([^/]+)$/.exec(url.pathname);
  if (!hook || request.method !== "POST") return json({ error: "not a hook" }, 404);
  const received = inboxes.get(hook[1]) ?? [];
  inboxes.set(hook[1], received);
  received.push({ headers: Object.fromEntries(request.headers), body: await request.text(), at: Date.now() });
  if (url.searchParams.get("hang")) return new Promise(() => {});
  const fail = Number(url.searchParams.get("fail") ?? 0);
  if (received.length <= fail) return new Response("receiver is down", { status: 500 });
  return new Response(null, { status: 204 });
}

// The Signals judge (a request asking for the signal_verdict json_schema). Its verdict comes from markers
// in the judged log: [[verdict:true]] or [[verdict:false]] (none: false), [[quote:…]] the quote (none:
// empty), [[judge-status:429]] answers that status every time, [[judge-flaky:N]] answers 503 to the
// first N calls of the same conversation, [[judge-bad]] answers text that is not JSON.
const flakyCalls = new Map();

function fakeJudge(body) {
  const text = body.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
  const usage = { prompt_tokens: Math.ceil(text.length / 4), completion_tokens: 20, total_tokens: Math.ceil(text.length / 4) + 20 };
  const status = /\[\[judge-status:(\d{3})\]\]/.exec(text);
  if (status) return json({ error: { message: `judge answered ${status[1]} on purpose` } }, Number(status[1]));
  const flaky = /\[\[judge-flaky:(\d+)\]\]/.exec(text);
  if (flaky) {
    const seen = (flakyCalls.get(text) ?? 0) + 1;
    flakyCalls.set(text, seen);
    if (seen <= Number(flaky[1])) return json({ error: { message: `overloaded (call ${seen})` } }, 503);
  }
  const content = /\[\[judge-bad\]\]/.test(text)
    ? "I think so."
    : JSON.stringify({ result: /\[\[verdict:true\]\]/.test(text), reasoning: "the fake judge read the markers", quote: /\[\[quote:([^\]]*)\]\]/.exec(text)?.[1] ?? "" });
  return json({ id: "fake-judge", object: "chat.completion", model: body.model, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage });
}

/** A streamed chat completion: one chunk a word, then the usage chunk when asked for, then [DONE]. */
function fakeLlmStream(body, reply, usage) {
  const chunk = (delta, finish = null) => ({ id: "fake", object: "chat.completion.chunk", model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const events = [chunk({ role: "assistant", content: "" }), ...reply.split(/(?<= )/).map((w) => chunk({ content: w })), chunk({}, "stop")];
  if (body.stream_options?.include_usage) events.push({ id: "fake", object: "chat.completion.chunk", model: body.model, choices: [], usage });
  const text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

export async function fakeUpstream(request) {
  const url = new URL(request.url);
  if (url.hostname === "fake-webhook.test") return fakeWebhook(request, url);
  if (url.hostname === "fake-llm.test" && url.pathname === "/v1/chat/completions") {
    const auth = request.headers.get("authorization");
    if (auth !== "Bearer test-key" && auth !== "Bearer workspace-key") return json({ error: { message: "bad key" } }, 401);
    const body = await request.json();
    if (body.response_format?.json_schema?.name === "signal_verdict") return fakeJudge(body);
    const last = [...body.messages].reverse().find((m) => m.role === "user")?.content ?? "";
    const m = /\[\[reply:([^\]]*)\]\]/.exec(last);
    const reply = (m ? m[1] : `echo: ${last}`) + (auth === "Bearer workspace-key" ? " [workspace key]" : "");
    // Token counts: words, so tests can tell them apart.
    const usage = { prompt_tokens: JSON.stringify(body.messages).split(/\s+/).length, completion_tokens: reply.split(/\s+/).length };
    if (body.stream) return fakeLlmStream(body, reply, usage);
    return json({ id: "fake", object: "chat.completion", model: body.model, choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }], usage });
  }
  if (url.hostname === "fake-endpoint.test" && url.pathname === "/slow") {
    // A slow answer, for tests that must catch work while it runs (cancellation).
    await new Promise((r) => setTimeout(r, Number(url.searchParams.get("ms") ?? 300)));
    return json({ slow: true });
  }
  if (url.hostname === "fake-endpoint.test") {
    const text = request.method === "GET" ? "" : await request.text();
    return json({ method: request.method, path: url.pathname, received: text ? JSON.parse(text) : null });
  }
  return new Response(`no fake upstream for ${url.hostname}`, { status: 502 });
}
