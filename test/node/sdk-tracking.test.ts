// Every public method of the official promptlayer SDK but runWorkflow, against a real `wrangler dev`:
// logRequest, templates, group.create and track.* here, each result checked through the API.
// The SDK is loaded the way the README shows for ES modules: through createRequire, i.e. its CommonJS
// build, whose run() and provider wrappers can require the provider clients (its ES build cannot).
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedApi } from "./helpers/shared-api";
import { setEnv, startFakeProviders, type FakeProviders } from "./helpers/fake-providers";
import { searchUntil } from "./search-until";

const require = createRequire(import.meta.url);
const { PromptLayer } = require("promptlayer") as typeof import("promptlayer");

const api = sharedApi("sdk-tracking");
const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url });

async function getApi(path: string, key = api.key) {
  const res = await fetch(`${api.url}${path}`, { headers: { "X-API-KEY": key } });
  return { status: res.status, body: (await res.json()) as any };
}

const chat = (text: string) => ({
  type: "chat" as const,
  messages: [{ role: "user" as const, content: [{ type: "text" as const, text }] }],
  input_variables: [] as string[],
});

async function logOne(extra: Record<string, unknown> = {}): Promise<number> {
  const now = Date.now() / 1000;
  const res = (await pl.logRequest({
    provider: "openai",
    model: "gpt-4o",
    input: chat("Hello!"),
    output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "Hi!" }] }] },
    request_start_time: now - 1,
    request_end_time: now,
    ...extra,
  } as never)) as { id: number };
  expect(res.id).toEqual(expect.any(Number));
  return res.id;
}

describe("the official promptlayer SDK: tracking and groups", () => {
  it("track.score, track.metadata, track.prompt and track.group return true and change the log", async () => {
    const id = await logOne({ metadata: { env: "dev" } });
    await pl.templates.publish({ prompt_name: "sdk-tracked", prompt_template: chat("v1"), metadata: { model: { provider: "openai", name: "gpt-4o", parameters: {} } } } as never);
    await pl.templates.publish({ prompt_name: "sdk-tracked", prompt_template: chat("v2"), release_labels: ["prod"] } as never);

    expect(await pl.track.score({ request_id: id, score: 70 })).toBe(true);
    expect(await pl.track.score({ request_id: id, score: 85, name: "accuracy" } as never)).toBe(true);
    expect(await pl.track.metadata({ request_id: id, metadata: { session: "s-42", env: "prod" } })).toBe(true);
    expect(await pl.track.prompt({ request_id: id, prompt_name: "sdk-tracked", prompt_input_variables: { topic: "otters" }, label: "prod" } as never)).toBe(true);
    const groupId = await pl.group.create();
    expect(groupId).toEqual(expect.any(Number));
    expect(await pl.track.group({ request_id: id, group_id: groupId as number })).toBe(true);

    const { status, body } = await getApi(`/api/public/v2/requests/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      score: 70,
      scores: { default: 70, accuracy: 85 },
      metadata: { env: "prod", session: "s-42" },
      prompt_name: "sdk-tracked",
      prompt_version_number: 2,
      prompt_input_variables: { topic: "otters" },
      group_id: groupId,
    });
    const items = await searchUntil(api, {
      filter_group: {
        logic: "AND",
        filters: [
          { field: "group_id", operator: "is", value: groupId },
          { field: "scores", nested_key: "accuracy", operator: "gte", value: 80 },
          { field: "metadata", nested_key: "session", operator: "key_equals", value: "s-42" },
        ],
      },
    });
    expect(items.map((i: { id: number }) => i.id)).toEqual([id]);
  });

  it("surfaces a 404 as the SDK's error, and returns false when throwOnError is off", async () => {
    await expect(pl.track.score({ request_id: 99_999_999, score: 5 })).rejects.toThrow(/request not found/);
    await expect(pl.track.group({ request_id: await logOne(), group_id: 99_999_999 })).rejects.toThrow(/group not found/);
    const quiet = new PromptLayer({ apiKey: api.key, baseURL: api.url, throwOnError: false });
    expect(await quiet.track.metadata({ request_id: 99_999_999, metadata: { a: "b" } })).toBe(false);
    const wrongKey = new PromptLayer({ apiKey: "pe_" + "1".repeat(48), baseURL: api.url });
    await expect(wrongKey.group.create()).rejects.toThrow(/unknown or revoked/);
  });

  it("templates.all lists what templates.publish stored", async () => {
    const all = (await pl.templates.all()) as Array<{ prompt_name: string }>;
    expect(all.map((t) => t.prompt_name)).toContain("sdk-tracked");
    expect((await pl.templates.get("sdk-tracked", { version: 1 }))?.version).toBe(1);
  });
});

// ---- run() and the provider wrappers, against fake providers served here ----

describe("the official promptlayer SDK: run() and the provider wrappers", () => {
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

  it("run() renders the template, calls the provider and logs the call with its prompt link, tags, metadata and group", async () => {
    await pl.templates.publish({
      prompt_name: "sdk-run",
      prompt_template: {
        type: "chat",
        messages: [{ role: "user", content: [{ type: "text", text: "Tell me about {animal}" }] }],
        input_variables: ["animal"],
      },
      metadata: { model: { provider: "openai", name: "gpt-4o-mini", parameters: { temperature: 0.5 }, api_type: "chat-completions" } },
    } as never);
    const groupId = (await pl.group.create()) as number;
    const before = fake.calls.length;
    const res = (await pl.run({ promptName: "sdk-run", inputVariables: { animal: "otters" }, tags: ["run"], metadata: { user: "u-1" }, groupId } as never)) as any;
    expect(res.request_id).toEqual(expect.any(Number));
    expect(res.raw_response).toMatchObject({ id: expect.stringMatching(/fake/) });
    expect(res.prompt_blueprint).toMatchObject({ prompt_template: expect.any(Object) });
    const sent = fake.calls.slice(before);
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent[0].body)).toContain("Tell me about otters");

    const { body } = await getApi(`/api/public/v2/requests/${res.request_id}`);
    expect(body).toMatchObject({
      provider: "openai",
      model: "gpt-4o-mini",
      tags: ["run"],
      metadata: { user: "u-1" },
      prompt_name: "sdk-run",
      prompt_version_number: 1,
      prompt_input_variables: { animal: "otters" },
      group_id: groupId,
      input_tokens: 12,
      output_tokens: 5,
      status: "SUCCESS",
    });
    expect(JSON.stringify(body.output)).toContain("Otters hold hands.");
  });

  it("run() with promptReleaseLabel and metadata through an A/B release: each user keeps their variant and every log records the served version and its variant", async () => {
    const name = `sdk-ab-${Date.now()}`;
    const metadata = { model: { provider: "openai", name: "gpt-4o-mini", parameters: {}, api_type: "chat-completions" } };
    const first = (await pl.templates.publish({ prompt_name: name, prompt_template: chat("variant one"), metadata, release_labels: ["prod"] } as never)) as any;
    await pl.templates.publish({ prompt_name: name, prompt_template: chat("variant two"), metadata } as never);
    const made = await fetch(`${api.url}/api/public/v2/ab-tests`, {
      method: "POST",
      headers: { "X-API-KEY": api.key, "Content-Type": "application/json" },
      body: JSON.stringify({
        name: "js split",
        prompt_template_id: first.id,
        release_label: "prod",
        assignment_key: "user_id",
        variants: [
          { key: "base", prompt_version_number: 1, percentage: 50 },
          { key: "challenger", prompt_version_number: 2, percentage: 50 },
        ],
      }),
    });
    expect(made.status).toBe(201);
    const id = ((await made.json()) as any).ab_test.id;
    const versions = new Set<number>();
    for (let u = 0; u < 8; u++) {
      const user = `js-user-${u}`;
      const assigned = (await getApi(`/api/public/v2/ab-tests/${id}/assignment?metadata_filters[user_id]=${user}`)).body;
      versions.add(assigned.prompt_version_number);
      for (let i = 0; i < 2; i++) {
        const res = (await pl.run({ promptName: name, promptReleaseLabel: "prod", metadata: { user_id: user } } as never)) as any;
        const { body } = await getApi(`/api/public/v2/requests/${res.request_id}`);
        expect(body, user).toMatchObject({ prompt_version_number: assigned.prompt_version_number, ab_test_id: id, ab_variant: assigned.variant, ab_assignment: "sticky" });
        expect(JSON.stringify(body.input)).toContain(assigned.prompt_version_number === 2 ? "variant two" : "variant one");
      }
    }
    expect(versions).toEqual(new Set([1, 2]));
    // A pinned version never goes through the release.
    const pinned = (await pl.run({ promptName: name, promptVersion: 1, metadata: { user_id: "js-user-0" } } as never)) as any;
    expect((await getApi(`/api/public/v2/requests/${pinned.request_id}`)).body.prompt_version_number).toBe(1);
  });

  it("pl.OpenAI logs each call and returns [response, request_id] with return_pl_id", async () => {
    const OpenAI = pl.OpenAI as any;
    const client = new OpenAI();
    const [response, requestId] = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "Say something about otters" }],
      return_pl_id: true,
      pl_tags: ["wrapper"],
    });
    expect(response.choices[0].message.content).toBe("Otters hold hands.");
    expect(requestId).toEqual(expect.any(Number));
    const { body } = await getApi(`/api/public/v2/requests/${requestId}`);
    expect(body).toMatchObject({ provider: "openai", model: "gpt-4o", tags: ["wrapper"], input_tokens: 12, output_tokens: 5, function_name: "openai.chat.completions.create" });
    expect(JSON.stringify(body.input)).toContain("Say something about otters");
  });

  it("pl.Anthropic logs each call and returns [response, request_id] with return_pl_id", async () => {
    const Anthropic = pl.Anthropic as any;
    const client = new Anthropic();
    const [response, requestId] = await client.messages.create({
      model: "claude-3-5-haiku-latest",
      max_tokens: 64,
      messages: [{ role: "user", content: "Say hello in French" }],
      return_pl_id: true,
    });
    expect(response.content[0].text).toBe("Bonjour!");
    const { body } = await getApi(`/api/public/v2/requests/${requestId}`);
    expect(body).toMatchObject({ provider: "anthropic", model: "claude-3-5-haiku-latest", input_tokens: 9, output_tokens: 3, status: "SUCCESS" });
    expect(JSON.stringify(body.output)).toContain("Bonjour!");
  });
});
