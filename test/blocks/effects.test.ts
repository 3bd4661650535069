// ENDPOINT and the LLM blocks, against fakes injected through the block context (no network).
import { describe, expect, it } from "vitest";
import { blockExternalState, createLlmProviders, evaluateBlock, providerSettings, validateBlockConfig, type BlockContext } from "../../src/blocks";
import { pickProvider } from "../../src/blocks/llm";
import { endpointUrlProblem } from "../../src/blocks/endpoint";

type Handler = (req: Request) => Response | Promise<Response>;
function fakeFetch(handler: Handler) {
  const calls: { url: string; method: string; headers: Headers; body: any }[] = [];
  const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input as string, init);
    const text = req.method === "GET" || req.method === "HEAD" ? "" : await req.clone().text();
    calls.push({ url: req.url, method: req.method, headers: req.headers, body: text ? JSON.parse(text) : undefined });
    return handler(req);
  }) as typeof fetch;
  return { fetch: f, calls };
}
const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });
const openAiAnswer = (text: string) => json({ choices: [{ message: { role: "assistant", content: text } }] });

describe("ENDPOINT", () => {
  it("POSTs its inputs as JSON with the configured headers and returns the JSON answer", async () => {
    const fake = fakeFetch(() => json({ valid: true }));
    const r = await evaluateBlock("ENDPOINT", { url: "https://api.example.com/validate", headers: { Authorization: "Bearer t" } }, { response: "hi" }, { fetch: fake.fetch });
    expect(r).toEqual({ ok: true, value: { valid: true } });
    expect(fake.calls[0]).toMatchObject({ url: "https://api.example.com/validate", method: "POST", body: { response: "hi" } });
    expect(fake.calls[0].headers.get("authorization")).toBe("Bearer t");
  });

  it("returns text answers as text and reports non-2xx answers as errors", async () => {
    expect(await evaluateBlock("ENDPOINT", { url: "https://x.example/a", method: "GET" }, {}, { fetch: fakeFetch(() => new Response("plain")).fetch })).toEqual({ ok: true, value: "plain" });
    const r = await evaluateBlock("ENDPOINT", { url: "https://x.example/a" }, {}, { fetch: fakeFetch(() => new Response("boom", { status: 502 })).fetch });
    expect(r).toEqual({ ok: false, error: "the endpoint answered 502: boom" });
  });

  it("gives up after the timeout", async () => {
    const slow = fakeFetch((req) => new Promise<Response>((_, reject) => req.signal.addEventListener("abort", () => reject(req.signal.reason))));
    const r = await evaluateBlock("ENDPOINT", { url: "https://slow.example/" }, {}, { fetch: slow.fetch, endpoint: { timeoutMs: 50 } });
    expect(r).toEqual({ ok: false, error: "the endpoint did not answer within 50 ms" });
  });

  it("caps the response size", async () => {
    const big = fakeFetch(() => new Response("x".repeat(2000)));
    expect(await evaluateBlock("ENDPOINT", { url: "https://big.example/" }, {}, { fetch: big.fetch, endpoint: { maxResponseBytes: 1000 } })).toEqual({
      ok: false,
      error: "the endpoint's response is larger than 1000 bytes",
    });
    expect((await evaluateBlock("ENDPOINT", { url: "https://big.example/" }, {}, { fetch: big.fetch, endpoint: { maxResponseBytes: 2000 } })).ok).toBe(true);
  });

  it("refuses loopback and private addresses unless the policy allows them", async () => {
    const fake = fakeFetch(() => json({ ok: 1 }));
    for (const url of ["http://127.0.0.1:8787/x", "http://localhost/x", "http://10.1.2.3/", "http://192.168.0.10/", "http://172.20.0.1/", "http://169.254.169.254/latest/meta-data", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://2130706433/", "http://metadata.google.internal/", "http://intranet/"]) {
      const r = await evaluateBlock("ENDPOINT", { url }, {}, { fetch: fake.fetch });
      expect(r.ok, url).toBe(false);
    }
    expect(fake.calls).toHaveLength(0);
    expect(await evaluateBlock("ENDPOINT", { url: "http://127.0.0.1:8787/x" }, {}, { fetch: fake.fetch, endpoint: { allowPrivateAddresses: true } })).toEqual({ ok: true, value: { ok: 1 } });
    expect(endpointUrlProblem("https://93.184.216.34/", false)).toBeNull();
    expect(endpointUrlProblem("http://172.32.0.1/", false)).toBeNull();
  });

  it("reads the IPv4 address inside IPv6 forms (mapped, compatible, translated, NAT64, 6to4) and refuses private ones", () => {
    const refused = [
      "http://[::]/", "http://[0:0:0:0:0:0:0:1]/", "http://[::127.0.0.1]/", "http://[::ffff:10.0.0.1]/", "http://[::ffff:0:127.0.0.1]/",
      "http://[64:ff9b::7f00:1]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b:1::1]/", "http://[2002:7f00:1::]/", "http://[2002:c0a8:1::1]/",
      "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "http://[fd00::1]/", "http://[fe80::1]/", "http://[fec0::1]/", "http://[ff02::1]/",
    ];
    for (const url of refused) expect(endpointUrlProblem(url, false), url).toMatch(/loopback or private/);
    const allowed = ["http://[64:ff9b::5db8:d822]/", "http://[2002:5db8:d822::1]/", "http://[2606:4700:4700::1111]/", "http://[::ffff:93.184.216.34]/"];
    for (const url of allowed) expect(endpointUrlProblem(url, false), url).toBeNull();
  });

  it("refuses internal and special-use names, names that embed a private IPv4, and special-purpose ranges", () => {
    const names = [
      "http://localhost.localdomain:8080/",
      "http://api.localhost/",
      "http://kubernetes.default.svc/",
      "http://db.cluster.local/",
      "http://printer.home.arpa/",
      "http://metadata.internal/",
      "http://intranet/",
      "http://nas.lan/",
    ];
    for (const url of names) expect(endpointUrlProblem(url, false), url).toMatch(/local or internal host name/);
    const pointers = ["http://127.0.0.1.nip.io/", "http://app.10-0-0-1.sslip.io/", "http://localtest.me/", "http://x.localtest.me/", "http://lvh.me/", "http://192.168.1.20.example.com/", "http://10-1-2-3.my-dns.example.org/"];
    for (const url of pointers) expect(endpointUrlProblem(url, false), url).toMatch(/made to point at a loopback or private address/);
    for (const url of ["http://192.0.2.5/", "http://198.51.100.7/", "http://203.0.113.9/", "http://192.88.99.1/", "http://[2001:db8::1]/", "http://[100::1]/", "http://2130706433/", "http://0x7f.0.0.1/"]) {
      expect(endpointUrlProblem(url, false), url).toMatch(/loopback or private/);
    }
    // Public names and addresses that merely look alike pass.
    for (const url of ["https://api.openai.com/v1", "https://local.example.com/", "https://internal-tools.example.com/", "https://v1.2.3.example.com/", "https://8.8.8.8.example.com/", "https://hooks.slack.com/x"]) {
      expect(endpointUrlProblem(url, false), url).toBeNull();
    }
    // Local development may allow them all.
    expect(endpointUrlProblem("http://localhost.localdomain:8080/", true)).toBeNull();
  });

  it("strips every trailing dot, refuses cloud metadata names and well-known public loopback names", () => {
    for (const url of ["http://localhost../", "http://localhost.../x", "http://127.0.0.1../", "http://0x7f.0.0.1../", "http://api.localhost.../", "http://intranet../"]) {
      expect(endpointUrlProblem(url, false), url).not.toBeNull();
    }
    for (const url of ["http://metadata.goog/computeMetadata/v1/", "http://metadata.goog./", "http://metadata.tencentyun.com/latest/meta-data/", "http://metadata.google.internal./"]) {
      expect(endpointUrlProblem(url, false), url).toMatch(/metadata service|local or internal host name/);
    }
    for (const url of ["http://fuf.me/", "http://app.localho.st/", "http://a.localhost.direct/", "http://lacolhost.com/", "http://smackaho.st./", "http://x.lvh.me../"]) {
      expect(endpointUrlProblem(url, false), url).toMatch(/made to point at a loopback or private address/);
    }
    // A public name with a trailing dot is the same public name.
    expect(endpointUrlProblem("https://api.openai.com./v1", false)).toBeNull();
    expect(endpointUrlProblem("https://metadata.google.com/", false)).toBeNull();
  });

  it("checks every redirect hop against the guard", async () => {
    const fake = fakeFetch((req) => (req.url.startsWith("https://public.example") ? new Response(null, { status: 302, headers: { location: "http://127.0.0.1/secret" } }) : json({ leaked: true })));
    const r = await evaluateBlock("ENDPOINT", { url: "https://public.example/" }, {}, { fetch: fake.fetch });
    expect(r).toEqual({ ok: false, error: "url points at a loopback or private address: http://127.0.0.1/secret" });
    expect(fake.calls).toHaveLength(1);
  });

  it("refuses configs with a bad URL, scheme or method", () => {
    expect(validateBlockConfig("ENDPOINT", { url: "ftp://x.example/" })).toMatchObject({ ok: false, message: "url: must be an http or https URL" });
    expect(validateBlockConfig("ENDPOINT", { url: "not a url" })).toMatchObject({ ok: false, message: "url: is not a valid URL" });
    expect(validateBlockConfig("ENDPOINT", { url: "https://x.example", method: "TRACE" }).ok).toBe(false);
    expect(validateBlockConfig("ENDPOINT", { url: "https://x.example", timeout_ms: 0 }).ok).toBe(false);
  });
});

describe("LLM providers", () => {
  it("OpenAI-compatible: chat completions with a bearer key at the configured base URL", async () => {
    const fake = fakeFetch(() => openAiAnswer("hello"));
    const llm = createLlmProviders({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "http://llm.test/v1/" }, fake.fetch);
    const res = await llm.get("openai")!.chat({ model: "m1", messages: [{ role: "user", content: "hi" }], parameters: { temperature: 0 } });
    expect(res.text).toBe("hello");
    expect(fake.calls[0].url).toBe("http://llm.test/v1/chat/completions");
    expect(fake.calls[0].headers.get("authorization")).toBe("Bearer sk-test");
    expect(fake.calls[0].body).toEqual({ temperature: 0, model: "m1", messages: [{ role: "user", content: "hi" }] });
  });

  it("Anthropic: messages API with the system prompt apart and max_tokens", async () => {
    const fake = fakeFetch(() => json({ content: [{ type: "text", text: "bonjour" }] }));
    const llm = createLlmProviders({ ANTHROPIC_API_KEY: "ak", ANTHROPIC_BASE_URL: "http://claude.test" }, fake.fetch);
    const res = await llm.get("anthropic")!.chat({ model: "c1", messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }] });
    expect(res.text).toBe("bonjour");
    expect(fake.calls[0].url).toBe("http://claude.test/v1/messages");
    expect(fake.calls[0].headers.get("x-api-key")).toBe("ak");
    expect(fake.calls[0].body).toEqual({ max_tokens: 1024, model: "c1", system: "be brief", messages: [{ role: "user", content: "hi" }] });
  });

  it("a provider error becomes the block's error (the key never appears)", async () => {
    const llm = createLlmProviders({ OPENAI_API_KEY: "sk-secret" }, fakeFetch(() => json({ error: { message: "bad model" } }, 400)).fetch);
    const r = await evaluateBlock("AI_DATA_EXTRACTION", { source: "s", query: "q" }, { s: "x" }, { llm });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/^openai answered 400: .*bad model/);
    expect(!r.ok && r.error).not.toMatch(/sk-secret/);
  });

  it("an unconfigured provider is an error that says what to set", async () => {
    const none = createLlmProviders({});
    expect(await evaluateBlock("AI_DATA_EXTRACTION", { source: "s", query: "q" }, { s: "x" }, { llm: none })).toEqual({
      ok: false,
      error: "no LLM provider is configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY on the console's Settings page (/console#/settings), or as a secret of the Worker",
    });
    const openaiOnly = createLlmProviders({ OPENAI_API_KEY: "k" });
    expect(await evaluateBlock("AI_DATA_EXTRACTION", { source: "s", query: "q", engine: { provider: "anthropic" } }, { s: "x" }, { llm: openaiOnly })).toEqual({
      ok: false,
      error: "no ANTHROPIC_API_KEY is set for this workspace: set it on the console's Settings page (/console#/settings) (a workspace environment variable), or as a secret of the Worker, to call anthropic models",
    });
  });

  it("takes each provider's key from the workspace first, then the Worker, its base URL going with its key", () => {
    const worker = { OPENAI_API_KEY: "worker-o", OPENAI_BASE_URL: "https://worker.example/v1", ANTHROPIC_API_KEY: "worker-a", LLM_DEFAULT_MODEL: "m" };
    const both = providerSettings({ OPENAI_API_KEY: "ws-o", OPENAI_BASE_URL: "https://ws.example/v1" }, worker, false);
    expect(both.settings).toMatchObject({ OPENAI_API_KEY: "ws-o", OPENAI_BASE_URL: "https://ws.example/v1", ANTHROPIC_API_KEY: "worker-a", LLM_DEFAULT_MODEL: "m" });
    expect(both.sources).toEqual({ openai: "workspace", anthropic: "worker" });
    // A workspace key without its own base URL goes to the Worker's.
    expect(providerSettings({ OPENAI_API_KEY: "ws-o" }, worker, false).settings).toMatchObject({ OPENAI_API_KEY: "ws-o", OPENAI_BASE_URL: "https://worker.example/v1" });
    // The Worker's key never goes to a base URL the workspace chose.
    expect(providerSettings({ OPENAI_BASE_URL: "https://ws.example/v1" }, worker, false).settings).toMatchObject({ OPENAI_API_KEY: "worker-o", OPENAI_BASE_URL: "https://worker.example/v1" });
    // Neither: no provider, and its message names the variable and the Settings page.
    const none = providerSettings({ OPENAI_API_KEY: "  " }, {}, false);
    expect(none.sources).toEqual({ openai: null, anthropic: null });
    expect(none.settings.OPENAI_API_KEY).toBeUndefined();
    // A refused workspace base URL makes the provider unusable (never the Worker's key instead) and says why.
    const refused = providerSettings({ OPENAI_API_KEY: "ws-o", OPENAI_BASE_URL: "http://10.0.0.1/v1" }, worker, false);
    expect(refused.settings.OPENAI_API_KEY).toBeUndefined();
    const llm = createLlmProviders(refused.settings, undefined, refused.problems);
    expect(llm.get("openai")).toBeUndefined();
    expect(() => pickProvider(llm, "openai")).toThrow(/LLM provider "openai" cannot be used: the workspace variable OPENAI_BASE_URL .*private address.*Settings page/);
    expect(providerSettings({ OPENAI_API_KEY: "ws-o", OPENAI_BASE_URL: "http://10.0.0.1/v1" }, worker, true).settings.OPENAI_BASE_URL).toBe("http://10.0.0.1/v1");
  });
});

describe("PROMPT_TEMPLATE", () => {
  const blueprint = {
    type: "chat",
    messages: [
      { role: "system", content: [{ type: "text", text: "You answer about {company}." }] },
      { role: "user", content: [{ type: "text", text: "{{ question }} ({{ meta.lang }})" }], template_format: "jinja2" },
    ],
  };

  it("renders an inline template (f-string and jinja2) with mapped and same-name inputs and calls the engine", async () => {
    const fake = fakeFetch(() => openAiAnswer("42"));
    const ctx: BlockContext = { llm: createLlmProviders({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://llm.test/v1" }, fake.fetch) };
    const r = await evaluateBlock(
      "PROMPT_TEMPLATE",
      { template: { prompt_template: blueprint }, prompt_template_variable_mappings: { question: "user_question" }, engine: { model: "gpt-x", parameters: { temperature: 0.2 } } },
      { user_question: "Why?", company: "Acme", meta: { lang: "en" } },
      ctx,
    );
    expect(r).toEqual({ ok: true, value: "42" });
    expect(fake.calls[0].body).toEqual({
      temperature: 0.2,
      model: "gpt-x",
      messages: [
        { role: "system", content: "You answer about Acme." },
        { role: "user", content: "Why? (en)" },
      ],
    });
  });

  it("resolves a stored template through the context, with the version's model as the default engine", async () => {
    const fake = fakeFetch(() => json({ content: [{ type: "text", text: "stored!" }] }));
    const seen: unknown[] = [];
    const ctx: BlockContext = {
      llm: createLlmProviders({ OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "a", ANTHROPIC_BASE_URL: "http://claude.test" }, fake.fetch),
      resolvePrompt: async (ref) => {
        seen.push(ref);
        return ref.version_number === 2
          ? { prompt_template: { type: "completion", content: [{ type: "text", text: "Say {word}" }] }, metadata: { model: { provider: "anthropic", name: "claude-z", parameters: { max_tokens: 5 } } } }
          : null;
      },
    };
    const cfg = { template: { name: "greeter", version_number: 2 } };
    expect(await evaluateBlock("PROMPT_TEMPLATE", cfg, { word: "hi" }, ctx)).toEqual({ ok: true, value: "stored!" });
    expect(seen).toEqual([{ name: "greeter", version_number: 2, label: undefined }]);
    expect(fake.calls[0].body).toEqual({ max_tokens: 5, model: "claude-z", messages: [{ role: "user", content: "Say hi" }] });
    expect(await evaluateBlock("PROMPT_TEMPLATE", { template: { name: "greeter", version_number: 3 } }, {}, ctx)).toEqual({ ok: false, error: 'prompt template "greeter" version 3 not found' });
  });

  it("a variable with no value is an error naming it", async () => {
    const ctx: BlockContext = { llm: createLlmProviders({ OPENAI_API_KEY: "k" }, fakeFetch(() => openAiAnswer("x")).fetch) };
    expect(await evaluateBlock("PROMPT_TEMPLATE", { template: { prompt_template: blueprint } }, { question: "q" }, ctx)).toEqual({ ok: false, error: 'template variable "company" has no value' });
  });

  it("validates the template reference", () => {
    expect(validateBlockConfig("PROMPT_TEMPLATE", { template: {} }).ok).toBe(false);
    expect(validateBlockConfig("PROMPT_TEMPLATE", { template: { name: "a", version_number: 1, label: "prod" } })).toMatchObject({ ok: false, message: "template.label: give either version_number or label, not both" });
    expect(validateBlockConfig("PROMPT_TEMPLATE", { template: { name: "a", prompt_template: blueprint } }).ok).toBe(false);
    expect(validateBlockConfig("PROMPT_TEMPLATE", { template: { prompt_template: { type: "chat" } } }).ok).toBe(false);
    expect(validateBlockConfig("PROMPT_TEMPLATE", { template: { prompt_name: "intent-classifier", label: "production" } }).ok).toBe(true);
  });
});

describe("LLM_ASSERTION and AI_DATA_EXTRACTION", () => {
  const withAnswers = (answers: Record<string, string>) => {
    const fake = fakeFetch(async (req) => {
      const body = (await req.json()) as { messages: { content: string }[] };
      const user = body.messages.at(-1)!.content;
      const key = Object.keys(answers).find((k) => user.includes(k));
      return openAiAnswer(key ? answers[key] : "I cannot tell");
    });
    return { ctx: { llm: createLlmProviders({ OPENAI_API_KEY: "k" }, fake.fetch) } as BlockContext, calls: fake.calls };
  };

  it("LLM_ASSERTION turns the evaluator's answer into a boolean", async () => {
    const { ctx, calls } = withAnswers({ "Is it polite?": "True", "Is it rude?": '{"result": false}' });
    expect(await evaluateBlock("LLM_ASSERTION", { source: "r", prompt: "Is it polite?" }, { r: "Thanks!" }, ctx)).toEqual({ ok: true, value: true });
    expect(await evaluateBlock("LLM_ASSERTION", { source: "r", prompt: "Is it rude?" }, { r: "Thanks!" }, ctx)).toEqual({ ok: true, value: false });
    expect(calls[0].body.messages[1].content).toContain("Thanks!");
    expect(await evaluateBlock("LLM_ASSERTION", { source: "r", prompt: "Other?" }, { r: "x" }, ctx)).toEqual({ ok: false, error: "the evaluator's answer is not true or false: I cannot tell" });
  });

  it("LLM_ASSERTION with a prompt_source holding a list answers each assertion", async () => {
    const { ctx } = withAnswers({ "cites sources": "yes", "is redacted": "no" });
    const r = await evaluateBlock("LLM_ASSERTION", { source: "r", prompt_source: "checks" }, { r: "text", checks: '["cites sources", "is redacted"]' }, ctx);
    expect(r).toEqual({ ok: true, value: { "cites sources": true, "is redacted": false } });
  });

  it("LLM_ASSERTION needs exactly one of prompt and prompt_source", () => {
    expect(validateBlockConfig("LLM_ASSERTION", { source: "r" }).ok).toBe(false);
    expect(validateBlockConfig("LLM_ASSERTION", { source: "r", prompt: "a", prompt_source: "b" }).ok).toBe(false);
  });

  it("AI_DATA_EXTRACTION returns the extracted text", async () => {
    const { ctx } = withAnswers({ "sentiment": "  positive\n" });
    expect(await evaluateBlock("AI_DATA_EXTRACTION", { source: "r", query: "What is the overall sentiment?" }, { r: "Love it" }, ctx)).toEqual({ ok: true, value: "positive" });
    expect(validateBlockConfig("AI_DATA_EXTRACTION", { source: "r", query: "" }).ok).toBe(false);
  });
});

describe("blockExternalState", () => {
  it("is the stored prompt a PROMPT_TEMPLATE names, null for an inline one, undefined for blocks without outside state", async () => {
    const stored = { prompt_template: { type: "completion", content: [{ type: "text", text: "v2" }] } };
    const ctx: BlockContext = { resolvePrompt: async (ref) => (ref.label === "prod" ? stored : null) };
    expect(await blockExternalState("PROMPT_TEMPLATE", { template: { name: "p", label: "prod" } }, ctx)).toEqual(stored);
    expect(await blockExternalState("PROMPT_TEMPLATE", { template: { name: "p", label: "gone" } }, ctx)).toBeNull();
    expect(await blockExternalState("PROMPT_TEMPLATE", { template: { prompt_template: stored.prompt_template } }, ctx)).toBeNull();
    expect(await blockExternalState("PARSE_VALUE", { source: "x", type: "number" }, ctx)).toBeUndefined();
  });

  it("never throws: a failed lookup gives a value that matches nothing cached", async () => {
    const ctx: BlockContext = { resolvePrompt: async () => Promise.reject(new Error("D1 down")) };
    const a = await blockExternalState("PROMPT_TEMPLATE", { template: { name: "p" } }, ctx);
    const b = await blockExternalState("PROMPT_TEMPLATE", { template: { name: "p" } }, ctx);
    expect(a).not.toEqual(b);
  });
});
