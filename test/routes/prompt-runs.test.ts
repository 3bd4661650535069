// POST /api/public/v2/prompt-runs: a stored version or a draft, filled with input variables, sent with
// the workspace's own key to the fake provider (test/fake-upstream.mjs, at the Worker's
// OPENAI_BASE_URL), answered as JSON or streamed, and logged as a request linked to the version.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, logsDb, type TestKey } from "../helpers/api";

const RUNS = "/api/public/v2/prompt-runs";
const text = (t: string) => [{ type: "text", text: t }];
const chat = (system: string, user: string) => ({
  type: "chat",
  messages: [
    { role: "system", content: text(system) },
    { role: "user", content: text(user) },
  ],
});
const model = (name = "gpt-4o-mini", parameters: Record<string, unknown> = { temperature: 0 }) => ({ model: { provider: "openai", name, parameters } });

let ws: TestKey;
let promptId: number;
let promptName: string;

const run = (key: string, body: unknown) => call(RUNS, { method: "POST", key, json: body });
const setVar = (w: TestKey, key: string, value: string) => call("/api/public/v2/env-vars", { method: "POST", key: w.key, json: { key, value } });
async function logCount(w: TestKey): Promise<number> {
  const row = await (await logsDb(w)).prepare("SELECT count(*) AS n FROM request_logs WHERE workspace_id = ?").bind(w.workspaceId).first<{ n: number }>();
  return row!.n;
}

/** The events of a text/event-stream body, in order. */
async function events(res: Response): Promise<{ event: string; data: any }[]> {
  const body = await res.text();
  return body
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = block
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      return { event, data: JSON.parse(data) };
    });
}

beforeAll(async () => {
  ws = await createWorkspace();
  expect((await setVar(ws, "OPENAI_API_KEY", "test-key")).status).toBe(201);
  promptName = `runs-${crypto.randomUUID().slice(0, 8)}`;
  const publish = (user: string) =>
    call("/rest/prompt-templates", {
      method: "POST",
      key: ws.key,
      json: { prompt_template: { prompt_name: promptName }, prompt_version: { prompt_template: chat("Be brief.", user), metadata: model() } },
    }).then(json);
  promptId = (await publish("v1 says [[reply:first answer]] to {question}")).id;
  await publish("v2 says [[reply:second answer here]] to {question}");
});

describe("POST /api/public/v2/prompt-runs", () => {
  it("runs a stored version with input variables and logs it linked to that version", async () => {
    const res = await run(ws.key, { prompt: { identifier: promptName, version: 1 }, input_variables: { question: "what is 2+2?" }, tags: ["playground"] });
    expect(res.status).toBe(200);
    const out = await json(res);
    expect(out).toMatchObject({ success: true, status: "SUCCESS", provider: "openai", model: "gpt-4o-mini", output_text: "first answer", prompt_id: promptId, prompt_version_number: 1, error_message: null });
    expect(out.input_tokens).toBeGreaterThan(0);
    expect(out.output_tokens).toBe(2);
    expect(out.price).toBeGreaterThan(0);
    expect(Number.isInteger(out.latency_ms)).toBe(true);

    const log = await json(await call(`/api/public/v2/requests/${out.request_id}`, { key: ws.key }));
    expect(log).toMatchObject({ prompt_id: promptId, prompt_version_number: 1, prompt_input_variables: { question: "what is 2+2?" }, tags: ["playground"], model: "gpt-4o-mini", status: "SUCCESS" });
    expect(JSON.stringify(log.input)).toContain("v1 says [[reply:first answer]] to what is 2+2?");
    expect(JSON.stringify(log.output)).toContain("first answer");
    expect(log.parameters).toMatchObject({ temperature: 0 });
  });

  it("streams the answer as server-sent events: deltas, then done with the logged run", async () => {
    const res = await run(ws.key, { prompt: { identifier: String(promptId) }, input_variables: { question: "x" }, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const evs = await events(res);
    const deltas = evs.filter((e) => e.event === "delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.data.text).join("")).toBe("second answer here");
    expect(evs.at(-1)!.event).toBe("done");
    const done = evs.at(-1)!.data;
    expect(done).toMatchObject({ success: true, status: "SUCCESS", output_text: "second answer here", prompt_version_number: 2, output_tokens: 3 });
    const log = await json(await call(`/api/public/v2/requests/${done.request_id}`, { key: ws.key }));
    expect(log).toMatchObject({ prompt_id: promptId, prompt_version_number: 2, output_tokens: 3 });
    expect(JSON.stringify(log.output)).toContain("second answer here");
  });

  it("runs an unsaved draft with another model and its snippets filled; its log names the template without a version", async () => {
    const snippet = `snip-${crypto.randomUUID().slice(0, 8)}`;
    await call("/rest/prompt-templates", {
      method: "POST",
      key: ws.key,
      json: { prompt_template: { prompt_name: snippet }, prompt_version: { prompt_template: { type: "completion", content: text("Answer in {lang}.") } } },
    });
    const res = await run(ws.key, {
      prompt: { identifier: promptName },
      prompt_version: { prompt_template: chat(`@@@${snippet}@@@`, "draft [[reply:from the draft]]"), metadata: model("gpt-4o") },
      input_variables: { lang: "French" },
      model: { name: "gpt-4.1-mini", parameters: { max_tokens: 50 } },
    });
    expect(res.status).toBe(200);
    const out = await json(res);
    expect(out).toMatchObject({ output_text: "from the draft", model: "gpt-4.1-mini", prompt_id: promptId, prompt_version_number: null });
    const log = await json(await call(`/api/public/v2/requests/${out.request_id}`, { key: ws.key }));
    expect(log).toMatchObject({ prompt_id: promptId, prompt_version_number: null, model: "gpt-4.1-mini" });
    expect(log.parameters).toMatchObject({ temperature: 0, max_tokens: 50 });
    expect(JSON.stringify(log.input)).toContain("Answer in French.");
  });

  it("refuses bad input with a 4xx that names the field, and stores nothing", async () => {
    const before = await logCount(ws);
    const cases: [unknown, number, RegExp][] = [
      [{ input_variables: {} }, 400, /prompt: give prompt/],
      [{ prompt: { identifier: promptName }, input_variables: {} }, 400, /input_variables: the template uses "question", which has no value/],
      [{ prompt: { identifier: promptName, version: 1, label: "prod" }, input_variables: { question: "q" } }, 400, /prompt\.label: give version or label/],
      [{ prompt: { identifier: promptName }, input_variables: { question: "q" }, model: { provider: "cohere" } }, 400, /model\.provider: runs go to openai .* not "cohere"/],
      [{ prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: text("hi") }] } } }, 400, /model\.provider: the version names no provider/],
      [{ prompt_version: { prompt_template: { type: "nope" } } }, 400, /prompt_version\.prompt_template/],
      [{ prompt: { identifier: promptName, version: 99 }, input_variables: { question: "q" } }, 404, /version/],
      [{ prompt: { identifier: "no-such-template-here" } }, 404, /prompt template not found/],
      // A draft's template is looked up as a run's: unknown, or without the version named, is a 404.
      [{ prompt: { identifier: "no-such-template-here" }, prompt_version: { prompt_template: chat("s", "u"), metadata: model() } }, 404, /prompt template not found/],
      [{ prompt: { identifier: promptName, version: 99 }, prompt_version: { prompt_template: chat("s", "u"), metadata: model() } }, 404, /version/],
      [{ prompt: { identifier: promptName }, input_variables: { question: "q" }, stream: "yes" }, 400, /stream/],
    ];
    for (const [body, status, message] of cases) {
      const res = await run(ws.key, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      const err = await json(res);
      expect(err.success).toBe(false);
      expect(err.message).toMatch(message);
    }
    expect(await logCount(ws)).toBe(before);
  });

  it("answers 422 provider_not_configured naming the variable and the Settings page when neither the workspace nor the Worker has a key, and logs nothing", async () => {
    const bare = await createWorkspace();
    // The Worker has an OpenAI key (vitest.config.ts) but no Anthropic one.
    const res = await run(bare.key, { prompt_version: { prompt_template: chat("s", "u"), metadata: model() }, model: { provider: "anthropic", name: "claude-3-5-haiku-latest" } });
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ success: false, error: "provider_not_configured", message: expect.stringContaining("ANTHROPIC_API_KEY is set for this workspace: set it on the console's Settings page") });
    expect(await logCount(bare)).toBe(0);
  });

  it("keeps workspaces apart: another workspace's template is a 404 and its key is not lent", async () => {
    const owner = await createWorkspace();
    await setVar(owner, "OPENAI_API_KEY", "workspace-key");
    const other = await createWorkspace();
    const foreign = await run(other.key, { prompt: { identifier: String(promptId) }, input_variables: { question: "q" } });
    expect(foreign.status).toBe(404);
    const byName = await run(other.key, { prompt: { identifier: promptName }, input_variables: { question: "q" } });
    expect(byName.status).toBe(404);
    expect(await logCount(other)).toBe(0);
    // The owner's runs carry its key (the fake marks them); the other's run falls back to the Worker's.
    const mine = await json(await run(owner.key, { prompt_version: { prompt_template: chat("s", "[[reply:hi]]"), metadata: model() } }));
    expect(mine.output_text).toBe("hi [workspace key]");
    const theirs = await json(await run(other.key, { prompt_version: { prompt_template: chat("s", "[[reply:hi]]"), metadata: model() } }));
    expect(theirs.output_text).toBe("hi");
  });

  it("logs a failed provider call as an ERROR run with the provider's message", async () => {
    const w = await createWorkspace();
    await setVar(w, "OPENAI_API_KEY", "wrong-key");
    const res = await run(w.key, { prompt_version: { prompt_template: chat("s", "u"), metadata: model() }, stream: true });
    expect(res.status).toBe(200);
    const done = (await events(res)).find((e) => e.event === "done")!.data;
    expect(done).toMatchObject({ status: "ERROR", output_text: "", error_message: expect.stringMatching(/^openai answered 401: .*bad key/) });
    const log = await json(await call(`/api/public/v2/requests/${done.request_id}`, { key: w.key }));
    expect(log).toMatchObject({ status: "ERROR", error_type: "PROVIDER_ERROR" });
  });

  it("refuses a workspace base URL that points at a private address", async () => {
    const w = await createWorkspace();
    await setVar(w, "OPENAI_API_KEY", "test-key");
    await setVar(w, "OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
    const res = await run(w.key, { prompt_version: { prompt_template: chat("s", "u"), metadata: model() } });
    expect(res.status).toBe(422);
    expect((await json(res)).message).toMatch(/OPENAI_BASE_URL points at a loopback or private address/);
    expect(await logCount(w)).toBe(0);
  });

  it("is in /openapi.json with its description and both answer types", async () => {
    const doc = await json(await call("/openapi.json"));
    const op = doc.paths["/api/public/v2/prompt-runs"].post;
    expect(op.description).toMatch(/text\/event-stream/);
    expect(Object.keys(op.responses[200].content).sort()).toEqual(["application/json", "text/event-stream"]);
    expect(op.responses[422].content["application/json"]).toBeTruthy();
  });
});
