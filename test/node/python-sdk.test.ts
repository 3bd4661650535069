// PromptLayer's official Python SDK (the vendored 1.5.14, run by /usr/bin/python3) against a real
// `wrangler dev` of this Worker, with fake OpenAI and Anthropic providers served here. Each test
// drives the SDK as a user would and reads what the server stored back through the REST API.
import { beforeAll, describe, expect, it } from "vitest";
import { pythonSdkMissing, sharedPythonHarness, type PythonHarness } from "./helpers/python";
import { searchUntil } from "./search-until";

// Without the Debian packages the SDK needs, the suite is skipped with one line saying what to
// install; in CI (CI set, as .ci/run exports it) a suite that cannot run fails the run instead.
const missing = pythonSdkMissing();
const inCi = Boolean(process.env.CI) && process.env.CI !== "false";
// (Written to stderr: Vitest shows a passing file's console output only when it fails.)
if (missing && !inCi) process.stderr.write(`Skipped the Python SDK's tests: ${missing}\n`);
const describePy = missing ? describe.skip : describe;

if (missing && inCi) {
  it("the Python SDK's tests can run (CI installs what they need)", () => {
    throw new Error(`the Python SDK's tests cannot run in CI: ${missing}`);
  });
}

let h: PythonHarness;
beforeAll(() => {
  if (!missing) h = sharedPythonHarness("python-sdk");
});

describePy("the Python SDK: logging and templates", () => {
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

describePy("the Python SDK: provider wrappers", () => {
  it("pl.openai.* and pl.anthropic.* clients, sync and async, streamed or not, log each call and return_pl_id gives its id", async () => {
    const { value: ids } = await h.python<Record<string, number>>(`
fake = os.environ["ANTHROPIC_BASE_URL"]
pl = PromptLayer()
ids = {}
msgs = lambda text: [{"role": "user", "content": text}]
def last_id(pairs):
    found = [i for _, i in pairs if i is not None]
    assert len(found) == 1, found
    return found[0]

oc = pl.openai.OpenAI()
response, ids["OpenAI"] = oc.chat.completions.create(model="gpt-4o", messages=msgs("sync openai"), return_pl_id=True, pl_tags=["wrapped"])
assert response.choices[0].message.content == "Otters hold hands."
plain = oc.chat.completions.create(model="gpt-4o", messages=msgs("no id asked"))
assert plain.choices[0].message.content == "Otters hold hands."
ids["OpenAI.parse"] = oc.chat.completions.parse(model="gpt-4o", messages=msgs("parse openai"), return_pl_id=True)[1]
ids["OpenAI.responses"] = oc.responses.create(model="gpt-4o", input="responses openai", return_pl_id=True)[1]
ids["OpenAI.stream"] = last_id(oc.chat.completions.create(model="gpt-4o", messages=msgs("stream openai"), stream=True, return_pl_id=True))
az = pl.openai.AzureOpenAI(api_key="k", api_version="2024-06-01", base_url=os.environ["OPENAI_BASE_URL"])
ids["AzureOpenAI"] = az.chat.completions.create(model="gpt-4o", messages=msgs("azure"), return_pl_id=True)[1]
ac = pl.anthropic.Anthropic()
ids["Anthropic"] = ac.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=msgs("sync anthropic"), return_pl_id=True)[1]
ids["Anthropic.stream"] = last_id(ac.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=msgs("stream anthropic"), stream=True, return_pl_id=True))
vx = pl.anthropic.AnthropicVertex(region="us-east5", project_id="p", access_token="t", base_url=fake)
ids["AnthropicVertex"] = vx.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=msgs("vertex"), return_pl_id=True)[1]

async def main():
    ao = pl.openai.AsyncOpenAI()
    ids["AsyncOpenAI"] = (await ao.chat.completions.create(model="gpt-4o", messages=msgs("async openai"), return_pl_id=True))[1]
    stream = await ao.chat.completions.create(model="gpt-4o", messages=msgs("async stream openai"), stream=True, return_pl_id=True)
    ids["AsyncOpenAI.stream"] = last_id([pair async for pair in stream])
    aaz = pl.openai.AsyncAzureOpenAI(api_key="k", api_version="2024-06-01", base_url=os.environ["OPENAI_BASE_URL"])
    ids["AsyncAzureOpenAI"] = (await aaz.chat.completions.create(model="gpt-4o", messages=msgs("async azure"), return_pl_id=True))[1]
    aa = pl.anthropic.AsyncAnthropic()
    ids["AsyncAnthropic"] = (await aa.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=msgs("async anthropic"), return_pl_id=True))[1]
    stream = await aa.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=msgs("async stream anthropic"), stream=True, return_pl_id=True)
    ids["AsyncAnthropic.stream"] = last_id([pair async for pair in stream])
    avx = pl.anthropic.AsyncAnthropicVertex(region="us-east5", project_id="p", access_token="t", base_url=fake)
    ids["AsyncAnthropicVertex"] = (await avx.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=msgs("async vertex"), return_pl_id=True))[1]
asyncio.run(main())
emit(ids)
`);
    // [key, provider, function_name, the prompt sent, the reply stored (null: none stored)]
    const expected: [string, string, string, string, string | null][] = [
      ["OpenAI", "openai", "openai.OpenAI.chat.completions.create", "sync openai", "Otters hold hands."],
      ["OpenAI.parse", "openai", "openai.OpenAI.chat.completions.parse", "parse openai", "Otters hold hands."],
      ["OpenAI.responses", "openai", "openai.OpenAI.responses.create", "responses openai", "Otters hold hands."],
      // The SDK posts only the chunk that ended an OpenAI stream: the text streamed before it is not sent.
      ["OpenAI.stream", "openai", "openai.OpenAI.chat.completions.create", "stream openai", null],
      ["AzureOpenAI", "openai.azure", "openai.AzureOpenAI.chat.completions.create", "azure", "Otters hold hands."],
      ["Anthropic", "anthropic", "anthropic.Anthropic.messages.create", "sync anthropic", "Bonjour!"],
      ["Anthropic.stream", "anthropic", "anthropic.Anthropic.messages.create", "stream anthropic", "Bonjour!"],
      ["AnthropicVertex", "anthropic.vertex", "anthropic.AnthropicVertex.messages.create", "vertex", "Bonjour!"],
      ["AsyncOpenAI", "openai", "openai.AsyncOpenAI.chat.completions.create", "async openai", "Otters hold hands."],
      ["AsyncOpenAI.stream", "openai", "openai.AsyncOpenAI.chat.completions.create", "async stream openai", null],
      ["AsyncAzureOpenAI", "openai.azure", "openai.AsyncAzureOpenAI.chat.completions.create", "async azure", "Otters hold hands."],
      ["AsyncAnthropic", "anthropic", "anthropic.AsyncAnthropic.messages.create", "async anthropic", "Bonjour!"],
      ["AsyncAnthropic.stream", "anthropic", "anthropic.AsyncAnthropic.messages.create", "async stream anthropic", "Bonjour!"],
      ["AsyncAnthropicVertex", "anthropic.vertex", "anthropic.AsyncAnthropicVertex.messages.create", "async vertex", "Bonjour!"],
    ];
    expect(Object.keys(ids).sort()).toEqual(expected.map(([k]) => k).sort());
    for (const [k, provider, functionName, prompt, reply] of expected) {
      expect(ids[k], k).toEqual(expect.any(Number));
      const { status, body } = await h.call("GET", `/api/public/v2/requests/${ids[k]}`);
      expect(status, k).toBe(200);
      expect(body, k).toMatchObject({ provider, function_name: functionName, status: "SUCCESS" });
      expect(JSON.stringify(body.input), k).toContain(prompt);
      if (reply) {
        expect(JSON.stringify(body.output), k).toContain(reply);
        expect(body.input_tokens, k).toBeGreaterThan(0);
      }
    }
    expect((await h.call("GET", `/api/public/v2/requests/${ids.OpenAI}`)).body.tags).toEqual(["wrapped"]);
    expect(new Set(Object.values(ids)).size).toBe(expected.length);
  });
});

describePy("the Python SDK: run() with overrides", () => {
  it("model_parameter_overrides, model and provider reach the provider call and the stored log, sync and async", async () => {
    const { value } = await h.python(`
pl = PromptLayer()
pl.templates.publish({
    "prompt_name": "py-run-overrides",
    "prompt_template": {"type": "chat", "input_variables": ["animal"], "messages": [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "Tell me about {animal}"}]}]},
    "metadata": {"model": {"provider": "openai", "name": "gpt-4o", "parameters": {"temperature": 0.1, "max_tokens": 50}}},
})
out = {}
r = pl.run("py-run-overrides", input_variables={"animal": "otters"}, model_parameter_overrides={"temperature": 0.9, "top_p": 0.5}, model="gpt-4o-mini")
out["params"] = {"id": r["request_id"], "text": r["raw_response"].choices[0].message.content}
r = pl.run("py-run-overrides", input_variables={"animal": "herons"}, provider="anthropic", model="claude-haiku-4-5")
out["provider"] = {"id": r["request_id"], "text": r["raw_response"].content[0].text}
r = pl.run("py-run-overrides", input_variables={"animal": "voles"})
out["plain"] = {"id": r["request_id"]}
async def main():
    apl = AsyncPromptLayer()
    r = await apl.run("py-run-overrides", input_variables={"animal": "stoats"}, provider="anthropic", model="claude-haiku-4-5", model_parameter_overrides={"max_tokens": 80}, stream=True)
    async for chunk in r:
        last = chunk
    out["async"] = {"id": last["request_id"]}
asyncio.run(main())
emit(out)
`);
    const calls = await h.fake.calls();
    const sent = (animal: string) => calls.filter((c) => JSON.stringify(c.body).includes(`Tell me about ${animal}`));
    // Parameters merged over the version's, and the model replaced, in the provider call and the log.
    const [params] = sent("otters");
    expect(params.path).toBe("/v1/chat/completions");
    expect(params.body).toMatchObject({ model: "gpt-4o-mini", temperature: 0.9, top_p: 0.5, max_tokens: 50 });
    expect(value.params.text).toBe("Otters hold hands.");
    const paramsLog = (await h.call("GET", `/api/public/v2/requests/${value.params.id}`)).body;
    expect(paramsLog).toMatchObject({ provider: "openai", model: "gpt-4o-mini", parameters: { temperature: 0.9, top_p: 0.5, max_tokens: 50 }, prompt_name: "py-run-overrides", prompt_version_number: 1 });
    // Another provider: the blueprint converted to Anthropic's shape (system apart), the call made with its client.
    const [switched] = sent("herons");
    expect(switched.path).toBe("/v1/messages");
    expect(switched.body).toMatchObject({ model: "claude-haiku-4-5", system: "Be brief.", temperature: 0.1, max_tokens: 50 });
    expect(value.provider.text).toBe("Bonjour!");
    const switchedLog = (await h.call("GET", `/api/public/v2/requests/${value.provider.id}`)).body;
    expect(switchedLog).toMatchObject({ provider: "anthropic", model: "claude-haiku-4-5", prompt_name: "py-run-overrides", input_tokens: 9, output_tokens: 3 });
    // No override: the version as stored.
    expect(sent("voles")[0].body).toMatchObject({ model: "gpt-4o", temperature: 0.1, max_tokens: 50 });
    expect((await h.call("GET", `/api/public/v2/requests/${value.plain.id}`)).body).toMatchObject({ model: "gpt-4o", parameters: { temperature: 0.1, max_tokens: 50 } });
    // The async client, streamed.
    const [streamed] = sent("stoats");
    expect(streamed.body).toMatchObject({ model: "claude-haiku-4-5", max_tokens: 80, stream: true });
    expect((await h.call("GET", `/api/public/v2/requests/${value.async.id}`)).body).toMatchObject({ provider: "anthropic", model: "claude-haiku-4-5", output_tokens: 3 });
  });
});

describePy("the Python SDK: run_workflow", () => {
  it("by name, by id, with return_all_outputs, async, and with outputs too large for the realtime message; each run's results read back", async () => {
    const name = `py-wf-${Date.now()}`;
    const made = await h.call("POST", "/rest/workflows", {
      name,
      required_input_variables: { topic: "string" },
      nodes: [
        // An LLM call made by the Worker itself, to the fake provider the harness points it at.
        {
          name: "answer",
          node_type: "PROMPT_TEMPLATE",
          is_output_node: true,
          dependencies: ["topic"],
          configuration: {
            template: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "[[reply:All about {topic}]]" }] }] } },
            engine: { provider: "openai", model: "gpt-4o-mini" },
          },
        },
        { name: "words", node_type: "COUNT", is_output_node: false, dependencies: ["answer"], configuration: { source: "answer", type: "words" } },
      ],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const big = await h.call("POST", "/rest/workflows", {
      name: `${name}-big`,
      nodes: [{ name: "blob", node_type: "VARIABLE", is_output_node: true, dependencies: [], configuration: { value: { type: "string", value: "x".repeat(70_000) } } }],
    });
    expect(big.status).toBe(201);
    const { value } = await h.python(`
import promptlayer.utils as plu
runs, fetched = [], []
# Record the execution ids and the fetches of large results; the SDK's own flow is unchanged.
post_run, get_final = plu._post_workflow_id_run, plu._get_final_output
async def recording_post_run(**kw):
    execution_id = await post_run(**kw)
    runs.append(execution_id)
    return execution_id
async def recording_get_final(*a, **kw):
    fetched.append(a[1])
    return await get_final(*a, **kw)
plu._post_workflow_id_run, plu._get_final_output = recording_post_run, recording_get_final

pl = PromptLayer()
out = {}
out["by_name"] = pl.run_workflow(${JSON.stringify(name)}, input_variables={"topic": "otters"}, timeout=60)
out["by_id"] = pl.run_workflow(${made.body.workflow_id}, input_variables={"topic": "herons"}, return_all_outputs=True, timeout=60)
out["big_len"] = len(pl.run_workflow(${JSON.stringify(`${name}-big`)}, timeout=60))
async def main():
    out["async"] = await AsyncPromptLayer().run_workflow(${JSON.stringify(name)}, input_variables={"topic": "voles"}, return_all_outputs=True, timeout=60)
asyncio.run(main())
out["runs"], out["fetched"] = runs, fetched
emit(out)
`);
    expect(value.by_name).toBe("All about otters");
    expect(value.by_id).toMatchObject({ answer: { status: "SUCCESS", value: "All about herons", is_output_node: true }, words: { status: "SUCCESS", value: 3, is_output_node: false } });
    expect(value.async.answer.value).toBe("All about voles");
    expect(value.big_len).toBe(70_000);
    // Only the large output was fetched from the results endpoint; the others came in the message.
    const [byName, byId, bigRun, asyncRun] = value.runs;
    expect(value.fetched).toEqual([bigRun]);
    // What the server stored for each run, read back (Python-style booleans in the query).
    for (const [id, topic] of [[byName, "otters"], [byId, "herons"], [asyncRun, "voles"]] as const) {
      const res = await h.call("GET", `/workflow-version-execution-results?workflow_version_execution_id=${id}&return_all_outputs=True`);
      expect(res.status).toBe(200);
      expect(res.body.answer).toMatchObject({ status: "SUCCESS", value: `All about ${topic}` });
    }
    expect((await h.call("GET", `/workflow-version-execution-results?workflow_version_execution_id=${byName}&return_all_outputs=False`)).body).toBe("All about otters");
  });

  it("another workspace's workflow, by name or id, or none, is not found and does not run", async () => {
    const other = h.keyOf("python-sdk-other");
    const theirs = await h.call("POST", "/rest/workflows", { name: `py-wf-theirs-${Date.now()}`, nodes: [{ name: "v", node_type: "VARIABLE", is_output_node: true, dependencies: [], configuration: { value: { type: "string", value: "no" } } }] }, other);
    expect(theirs.status).toBe(201);
    const { value } = await h.python(`
import promptlayer.utils as plu
started = []
post_run = plu._post_workflow_id_run
async def recording_post_run(**kw):
    started.append(kw["workflow_id"])
    return await post_run(**kw)
plu._post_workflow_id_run = recording_post_run
out = {}
for target in [${JSON.stringify(theirs.body.workflow_name)}, ${theirs.body.workflow_id}, "py-wf-none"]:
    try:
        PromptLayer().run_workflow(target, timeout=30)
        out[str(target)] = "ran"
    except Exception as e:
        out[str(target)] = type(e).__name__ + ": " + str(e)
out["started"] = started
emit(out)
`);
    expect(value.started).toEqual([]);
    for (const target of [theirs.body.workflow_name, String(theirs.body.workflow_id), "py-wf-none"]) expect(value[target], target).toMatch(/NotFound|not found/);
    // Their workflow is untouched: it has no run to read back, and its owner still runs it.
    const token = await h.call("POST", `/ws-token-request-library?capability=workflows:${theirs.body.workflow_id}:run:${"a".repeat(32)}`, {}, other);
    expect(token.status).toBe(201);
  });
});

describePy("the Python SDK: evaluate()", () => {
  it("runs to its end with a fake provider (the runner's calls and the Worker's LLM assertion), sync and async; the sheet, its trace rows and the scorecard are stored", async () => {
    const { value } = await h.python(
      `
from promptlayer.evaluations import evaluate, aevaluate, contains_scorer, regex_scorer, llm_assertion_scorer
pl = PromptLayer()
oc = pl.openai.OpenAI()
def runner(input):
    return oc.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": f"[[reply:{input} is an animal]]"}]).choices[0].message.content
out = {}
out["sync"] = evaluate(
    "py-eval",
    dataset=[{"input": "otter", "expected": "otter"}, {"input": "heron", "expected": "stork"}],
    runner=runner,
    scorers=[
        contains_scorer("Names it", expected_column="expected"),
        regex_scorer("Says animal", regex_pattern="animal"),
        llm_assertion_scorer("Judge", prompt="Does it name an animal? [[reply:true]]"),
    ],
)

async def main():
    aoc = pl.openai.AsyncOpenAI()
    async def arunner(input):
        r = await aoc.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": f"[[reply:{input} flies]]"}])
        return r.choices[0].message.content
    cases = [{"input": "swift", "expected": "flies"}, {"input": "vole", "expected": "swims"}]
    scorers = [contains_scorer("Matches", expected_column="expected")]
    # On a new table the async SDK first deletes the blank starter row with httpx's AsyncClient.delete(json=...),
    # which httpx 0.28 refuses before anything is sent: into an existing table there is no blank row.
    try:
        await aevaluate("py-aeval-new", dataset=cases, runner=arunner, scorers=scorers)
        out["async_new_table"] = "ran"
    except TypeError as e:
        out["async_new_table"] = str(e)
    table = pl.tables.create({"title": "py-aeval-table"})["table"]
    out["async"] = await aevaluate("py-aeval", table_id=table["id"], dataset=cases, runner=arunner, scorers=scorers)
asyncio.run(main())
emit(out)
`,
      { timeoutMs: 180_000 },
    );
    const sync = value.sync;
    expect(sync.total_rows).toBe(2);
    expect(sync.results.map((r: any) => [r.input, r.output, r.scores])).toEqual([
      ["otter", "otter is an animal", { "Names it": 1, "Says animal": 1, Judge: 1 }],
      ["heron", "heron is an animal", { "Names it": 0, "Says animal": 1, Judge: 1 }],
    ]);
    expect(sync.failed_row_indices).toEqual([sync.results[1].row_index]);
    // The Worker's own LLM call for the assertion reached the fake provider.
    expect((await h.fake.calls()).some((c) => JSON.stringify(c.body).includes("Does it name an animal?"))).toBe(true);

    // What the server stored: the sheet's rows (the blank starter row deleted), each with its trace.
    const sheet = `/api/public/v2/tables/${sync.table_id}/sheets/${sync.sheet_id}`;
    const stored = (await h.call("GET", `${sheet}/rows?include_columns=True`)).body;
    const byTitle = Object.fromEntries(stored.columns.map((c: any) => [c.title, c.id]));
    expect(Object.keys(byTitle)).toEqual(expect.arrayContaining(["input", "expected", "Output", "Trace"]));
    expect(stored.data.map((r: any) => r.row_index)).toEqual(sync.results.map((r: any) => r.row_index));
    expect(stored.data.map((r: any) => [r.cells[byTitle.input].value, r.cells[byTitle.expected].value, r.cells[byTitle.Output].value])).toEqual([
      ["otter", "otter", "otter is an animal"],
      ["heron", "stork", "heron is an animal"],
    ]);
    const trace = stored.data[0].cells[byTitle.Trace].value;
    expect(JSON.stringify(trace)).toContain(sync.results[0].span_id);
    const logIds: number[] = [];
    JSON.stringify(trace, (k, v) => (k === "request_log_id" && typeof v === "number" ? (logIds.push(v), v) : v));
    expect(logIds.length).toBeGreaterThan(0);
    expect((await h.call("GET", `/api/public/v2/requests/${logIds[0]}`)).body).toMatchObject({ model: "gpt-4o-mini", trace_id: sync.results[0].trace_id });
    const scorecard = (await h.call("GET", `${sheet}/scorecard`)).body;
    expect(scorecard.scorecard.steps.map((s: any) => s.title)).toEqual(["Names it", "Says animal", "Judge"]);
    expect(scorecard.latest_calculation).toMatchObject({ status: "completed", total_rows: 2 });
    expect((await h.call("GET", `${sheet}/status-counts`)).body.status_counts).toMatchObject({ QUEUED: 0, RUNNING: 0 });

    expect(value.async_new_table).toMatch(/unexpected keyword argument 'json'/);
    expect(value.async.results.map((r: any) => r.scores.Matches)).toEqual([1, 0]);
    const asyncRows = (await h.call("GET", `/api/public/v2/tables/${value.async.table_id}/sheets/${value.async.sheet_id}/rows`)).body;
    expect(asyncRows.row_count).toBe(2);
  });
});

describePy("the Python SDK: the template cache (skip_input_variable_rendering)", () => {
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

describePy("the Python SDK: ids unique across workspaces and log databases", () => {
  it("another workspace's log and group ids are refused by every tracking call, and nothing of the owner's changes", async () => {
    const other = h.keyOf("python-sdk-ids");
    const log = (key: string, tag: string) => `
pl = PromptLayer(api_key="${key}", throw_on_error=False)
log = pl.log_request(provider="openai", model="gpt-4o-mini",
    input={"type": "chat", "messages": [{"role": "user", "content": [{"type": "text", "text": "${tag}"}]}]},
    output={"type": "chat", "messages": [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]},
    request_start_time=1700000000, request_end_time=1700000001, metadata={"who": "${tag}"})
`;
    const mine = (await h.python(`${log(h.api.key, "mine")}
emit({"log": log["id"], "group": pl.group.create()})`)).value;
    // The other workspace is on the log database this one is not on (test/node/global-setup.ts placed both).
    const before = await h.call("GET", `/api/public/v2/requests/${mine.log}`);
    expect(before.body.metadata).toEqual({ who: "mine" });
    const theirs = (await h.python(`${log(other, "theirs")}
emit({
    "log": log["id"],
    "group": pl.group.create(),
    "score": pl.track.score(request_id=${mine.log}, score=7),
    "named": pl.track.score(request_id=${mine.log}, score=7, score_name="x"),
    "metadata": pl.track.metadata(request_id=${mine.log}, metadata={"who": "theirs"}),
    "group_of_mine": pl.track.group(request_id=log["id"], group_id=${mine.group}),
    "my_log_in_their_group": pl.track.group(request_id=${mine.log}, group_id=pl.group.create()),
})`)).value;
    // Each database numbers in its own range (2^40 ids): the two workspaces' logs and groups are in different ones.
    const range = (id: number) => Math.floor(id / 2 ** 40);
    expect(range(theirs.log)).not.toBe(range(mine.log));
    expect(range(theirs.group)).not.toBe(range(mine.group));
    expect(theirs).toMatchObject({ score: false, named: false, metadata: false, group_of_mine: false, my_log_in_their_group: false });

    expect((await h.call("GET", `/api/public/v2/requests/${mine.log}`, undefined, other)).status).toBe(404);
    expect(await h.call("GET", `/api/public/v2/requests/${mine.log}`)).toEqual(before);
  });
});

describe("the Python SDK: A/B releases through run(prompt_release_label, metadata)", () => {
  it("each user keeps their variant, logs carry the served version and its variant, a ramp moves only base users, a pinned version ignores the release, DELETE reverts", async () => {
    const name = `py-ab-${Date.now()}`;
    const texts = ["", "variant one", "variant two"];
    const version = (n: number, labels: string[] = []) =>
      h.call("POST", "/rest/prompt-templates", {
        prompt_template: { prompt_name: name },
        prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: texts[n] }] }] }, metadata: { model: { provider: "openai", name: "gpt-4o-mini", parameters: {} } } },
        release_labels: labels,
      });
    const first = await version(1, ["prod"]);
    await version(2);
    const made = await h.call("POST", "/api/public/v2/ab-tests", {
      name: "py split",
      prompt_template_id: first.body.id,
      release_label: "prod",
      assignment_key: "user_id",
      variants: [
        { key: "base", prompt_version_number: 1, percentage: 60 },
        { key: "challenger", prompt_version_number: 2, percentage: 40 },
      ],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.ab_test.id;
    const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    const logOf = async (requestId: number) => (await h.call("GET", `/api/public/v2/requests/${requestId}`)).body;
    // Each user's run() twice (the request ids its logs got), and the versions templates.get serves by label or pinned.
    const gets = (params: string) => `[pl.templates.get(${JSON.stringify(name)}, {${params}, "metadata_filters": {"user_id": u}})["version"] for u in ${JSON.stringify(users)}]`;
    const { value: runs } = await h.python<Record<string, number[]>>(
      `
pl = PromptLayer()
emit({u: [pl.run(${JSON.stringify(name)}, prompt_release_label="prod", metadata={"user_id": u})["request_id"] for _ in range(2)] for u in ${JSON.stringify(users)}})
`,
      { timeoutMs: 180_000 },
    );
    const assigned = await Promise.all(users.map(async (u) => (await h.call("GET", `/api/public/v2/ab-tests/${id}/assignment?metadata_filters[user_id]=${u}`)).body));
    await Promise.all(
      users.map(async (u, i) => {
        // What the release assigns this user is what run() was served, sent to the provider and logged, both times.
        for (const requestId of runs[u]) {
          const log = await logOf(requestId);
          expect(log, u).toMatchObject({ prompt_version_number: assigned[i].prompt_version_number, metadata: { user_id: u }, ab_test_id: id, ab_variant: assigned[i].variant, ab_assignment: "sticky" });
          expect(JSON.stringify(log.input), u).toContain(texts[assigned[i].prompt_version_number]);
        }
      }),
    );
    expect(new Set(assigned.map((a) => a.prompt_version_number))).toEqual(new Set([1, 2]));

    // A ramp from 40 % to 70 %: exactly the base users in buckets [4000, 7000) move, none back. A pinned version never goes through the release.
    const ramp = await h.call("PATCH", `/api/public/v2/ab-tests/${id}`, { variants: [{ key: "challenger", percentage: 70 }, { key: "base", percentage: 30 }] });
    expect(ramp.status, JSON.stringify(ramp.body)).toBe(200);
    const { value: afterRamp } = await h.python<[number[], number[]]>(`
pl = PromptLayer()
emit([${gets(`"label": "prod"`)}, ${gets(`"version": 1`)}])
`);
    expect(afterRamp[0]).toEqual(assigned.map((a) => (a.prompt_version_number === 2 || (a.bucket >= 4000 && a.bucket < 7000) ? 2 : 1)));
    expect(new Set(afterRamp[1])).toEqual(new Set([1]));

    // After DELETE the label serves its own version to everyone.
    expect((await h.call("DELETE", `/api/public/v2/ab-tests/${id}`)).status).toBe(200);
    const { value: reverted } = await h.python<number[]>(`
pl = PromptLayer()
emit(${gets(`"label": "prod"`)})
`);
    expect(new Set(reverted)).toEqual(new Set([1]));
  });
});

/**
 * A proxy in front of the local API that forwards every request and, for the first of each write
 * route it is told to, drops the answer once the server has given it (closes the connection without
 * a word): the client cannot know the log was stored, and retries.
 */
async function droppingProxy(target: string, drop: string[]) {
  const { createServer } = await import("node:http");
  const hits: Record<string, number> = {};
  const dropped = new Set<string>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? "/").split("?")[0];
    hits[path] = (hits[path] ?? 0) + 1;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && !["host", "connection", "content-length"].includes(k)) headers[k] = v;
    const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (drop.includes(path) && !dropped.has(path)) {
      dropped.add(path);
      req.socket.destroy();
      return;
    }
    res.writeHead(upstream.status, { "Content-Type": upstream.headers.get("content-type") ?? "application/json", ...(upstream.headers.get("idempotent-replayed") ? { "Idempotent-Replayed": "true" } : {}) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("the Python SDK's retries make one log (no Idempotency-Key: the same bytes within 10 minutes are a retry)", () => {
  it("log_request and a wrapped provider call whose first answers are lost: each is retried, answered the first answer, and logged once", async () => {
    const proxy = await droppingProxy(h.api.url, ["/log-request", "/track-request"]);
    try {
      const model = `retry-model-${Date.now()}`;
      const { value } = await h.python(
        `
import time
pl = PromptLayer()
now = time.time()
log = pl.log_request(provider="openai", model="${model}",
    input={"type": "chat", "messages": [{"role": "user", "content": [{"type": "text", "text": "retried once"}]}]},
    output={"type": "chat", "messages": [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]},
    request_start_time=now - 1, request_end_time=now, tags=["retried"])
oc = pl.openai.OpenAI()
_, tracked = oc.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "wrapped and retried"}], return_pl_id=True, pl_tags=["${model}"])
emit({"log": log["id"], "tracked": tracked})
`,
        { env: { PROMPTLAYER_BASE_URL: proxy.url } },
      );
      // Each write went through twice: the first answer was dropped, the SDK sent the same bytes again.
      expect(proxy.hits["/log-request"]).toBe(2);
      expect(proxy.hits["/track-request"]).toBe(2);
      expect(value.log).toEqual(expect.any(Number));
      expect(value.tracked).toEqual(expect.any(Number));
      // One log each: the model is a row field, so search sees every log at once (no indexing wait).
      const logged = await h.call("POST", "/api/public/v2/requests/search", { filter_group: { logic: "AND", filters: [{ field: "engine", operator: "is", value: model }] }, per_page: 10 });
      expect(logged.body.items.map((i: { id: number }) => i.id)).toEqual([value.log]);
      const tracked = await searchUntil(h.api, { filter_group: { logic: "AND", filters: [{ field: "tags", operator: "contains", value: model }] } });
      expect(tracked.map((i: { id: number }) => i.id)).toEqual([value.tracked]);
      const all = await h.call("POST", "/api/public/v2/requests/search", { q: "wrapped and retried", per_page: 10 });
      expect(all.body.items.map((i: { id: number }) => i.id)).toEqual([value.tracked]);
    } finally {
      await proxy.close();
    }
  });
});
