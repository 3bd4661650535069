// The fake upstreams the Worker reaches in tests (miniflare's outboundService runs this in Node, inside
// the test runtime): an OpenAI-compatible provider at fake-llm.test and an HTTP echo at fake-endpoint.test.
// Anything else is refused, so no test ever reaches the internet.
//
// fake-llm.test answers the text inside [[reply:…]] in the last user message, else "echo: <message>".

const json = (v, status = 200) => new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });

export async function fakeUpstream(request) {
  const url = new URL(request.url);
  if (url.hostname === "fake-llm.test" && url.pathname === "/v1/chat/completions") {
    if (request.headers.get("authorization") !== "Bearer test-key") return json({ error: { message: "bad key" } }, 401);
    const body = await request.json();
    const last = [...body.messages].reverse().find((m) => m.role === "user")?.content ?? "";
    const m = /\[\[reply:([^\]]*)\]\]/.exec(last);
    return json({ id: "fake", object: "chat.completion", model: body.model, choices: [{ index: 0, message: { role: "assistant", content: m ? m[1] : `echo: ${last}` }, finish_reason: "stop" }] });
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
