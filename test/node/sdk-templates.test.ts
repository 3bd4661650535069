// The official promptlayer SDK's prompt-template calls (templates.publish / get / all) against a real `wrangler dev`.
import { PromptLayer } from "promptlayer";
import { describe, expect, it } from "vitest";
import { sharedApi } from "./helpers/shared-api";

const api = sharedApi("sdk-templates");

const template = (text: string) => ({
  type: "chat" as const,
  messages: [
    { role: "system" as const, content: [{ type: "text" as const, text }] },
    { role: "user" as const, content: [{ type: "text" as const, text: "Tell me about {topic}" }] },
  ],
  input_variables: ["topic"],
});
const metadata = { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.3 } } };

describe("the official promptlayer SDK: templates", () => {
  it("publishes versions, gets them by name, version, label and with input variables, and lists them", async () => {
    const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url });
    const first = (await pl.templates.publish({ prompt_name: "sdk-greeter", prompt_template: template("v1"), commit_message: "first", metadata, tags: ["sdk"], release_labels: ["prod"] })) as any;
    expect(first).toMatchObject({ prompt_name: "sdk-greeter", version_number: 1, tags: ["sdk"], release_labels: ["prod"] });
    const second = (await pl.templates.publish({ prompt_name: "sdk-greeter", prompt_template: template("v2"), commit_message: "second", metadata })) as any;
    expect(second).toMatchObject({ id: first.id, version_number: 2 });

    const latest = await pl.templates.get("sdk-greeter");
    expect(latest).toMatchObject({ id: first.id, prompt_name: "sdk-greeter", version: 2, commit_message: "second", metadata, llm_kwargs: { model: "gpt-4o", temperature: 0.3, messages: expect.any(Array) } });
    expect((await pl.templates.get("sdk-greeter", { version: 1 }))?.commit_message).toBe("first");
    expect((await pl.templates.get("sdk-greeter", { label: "prod" }))?.version).toBe(1);
    const filled = (await pl.templates.get("sdk-greeter", { input_variables: { topic: "otters" } })) as any;
    expect(filled.prompt_template.messages[1].content[0].text).toBe("Tell me about otters");

    const all = await pl.templates.all({ per_page: 10, page: 1 });
    expect(all.map((t) => [t.prompt_name, t.version])).toEqual([["sdk-greeter", 2]]);
    expect((await pl.templates.all({ label: "prod" }))[0].version).toBe(1);
  });

  it("renders cached templates locally from the unrendered answer", async () => {
    const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url, cacheTtlSeconds: 60 });
    await pl.templates.publish({ prompt_name: "sdk-cached", prompt_template: template("c"), metadata });
    const a = (await pl.templates.get("sdk-cached", { input_variables: { topic: "bees" } })) as any;
    const b = (await pl.templates.get("sdk-cached", { input_variables: { topic: "ants" } })) as any;
    expect(a.prompt_template.messages[1].content[0].text).toBe("Tell me about bees");
    expect(b.prompt_template.messages[1].content[0].text).toBe("Tell me about ants");
  });

  it("surfaces our messages as the SDK's errors", async () => {
    const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url });
    await expect(pl.templates.get("no-such-prompt")).rejects.toThrow(/prompt template not found/);
    await expect(pl.templates.get("sdk-greeter", { version: 9 })).rejects.toThrow(/has no version 9/);
    await expect(pl.templates.publish({ prompt_name: "", prompt_template: template("x") })).rejects.toThrow(/prompt_name: must be 1 to 512 characters/);
    const quiet = new PromptLayer({ apiKey: api.key, baseURL: api.url, throwOnError: false });
    expect(await quiet.templates.get("no-such-prompt")).toBeNull();
  });
});
