// PromptLayer's official Python SDK (the vendored 1.5.14, run by /usr/bin/python3) against a real
// `wrangler dev` of this Worker, with fake OpenAI and Anthropic providers served here. Each test
// drives the SDK as a user would and reads what the server stored back through the REST API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPythonHarness, type PythonHarness } from "./helpers/python";

let h: PythonHarness;
beforeAll(async () => {
  h = await startPythonHarness({ workspace: "python-sdk" });
});
afterAll(async () => {
  await h?.stop();
});

describe("the Python SDK: logging and templates", () => {
  it("log_request stores the log and templates.publish/get round-trip", async () => {
    const { value } = await h.python(`
pl = PromptLayer()
pl.templates.publish({
    "prompt_name": "py-basic",
    "prompt_template": {"type": "chat", "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi {name}"}]}], "input_variables": ["name"]},
    "metadata": {"model": {"provider": "openai", "name": "gpt-4o-mini", "parameters": {"temperature": 0.2}}},
})
got = pl.templates.get("py-basic", {"input_variables": {"name": "Ada"}})
log = pl.log_request(
    provider="openai", model="gpt-4o-mini",
    input={"type": "chat", "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi Ada"}]}]},
    output={"type": "chat", "messages": [{"role": "assistant", "content": [{"type": "text", "text": "Hello!"}]}]},
    request_start_time=1700000000.5, request_end_time=1700000001.25, tags=["py"],
)
emit({"text": got["prompt_template"]["messages"][0]["content"][0]["text"], "log_id": log["id"]})
`);
    expect(value.text).toBe("Hi Ada");
    const { status, body } = await h.call("GET", `/api/public/v2/requests/${value.log_id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ provider: "openai", model: "gpt-4o-mini", tags: ["py"] });
  });
});

describe("the Python SDK: the template cache (skip_input_variable_rendering)", () => {
  it("fetches the template unfilled once and fills each get's variables itself, as the server would", async () => {
    const { value } = await h.python(`
pl = PromptLayer(cache_ttl_seconds=60)
pl.templates.publish({
    "prompt_name": "py-cached",
    "prompt_template": {"type": "chat", "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi {name}"}]}], "input_variables": ["name"]},
    "metadata": {"model": {"provider": "openai", "name": "gpt-4o-mini", "parameters": {}}},
})
a = pl.templates.get("py-cached", {"input_variables": {"name": "Ada"}})
b = pl.templates.get("py-cached", {"input_variables": {"name": "Bob"}})
plain = PromptLayer().templates.get("py-cached", {})
emit({
    "a": a["prompt_template"]["messages"][0]["content"][0]["text"],
    "b": b["prompt_template"]["messages"][0]["content"][0]["text"],
    "b_kwargs": b["llm_kwargs"]["messages"][0]["content"],
    "plain": plain["prompt_template"]["messages"][0]["content"][0]["text"],
})
`);
    // The second get is served from the cache: only a fetch that kept {name} lets the SDK fill in Bob.
    expect(value).toMatchObject({ a: "Hi Ada", b: "Hi Bob", plain: "Hi " });
    expect(JSON.stringify(value.b_kwargs)).toContain("Hi Bob");
  });
});
