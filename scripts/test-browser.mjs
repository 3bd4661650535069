#!/usr/bin/env node
// npm run test:browser: the console and /docs in a real browser. Starts `npm run dev` on a free port,
// logs requests and makes a prompt, a table, a dataset and an evaluation through the API, then drives
// the system Chromium (playwright-core, no browser download) through the console: find the requests
// by a filter, open one and read its messages (markup in a log stays text), open a trace's span tree
// and waterfall (its OTLP log records with their spans, the rest under the trace) and go between a
// span and its request log both ways, diff two prompt versions,
// see a sheet's stale cells and watch them recalculate, a dataset's rows, an evaluation run's status,
// the analytics charts, and /docs rendered, its "try it" sending the key as X-API-KEY. Every request the browser makes to a host other than this
// machine is blocked and fails the test, as does any Content-Security-Policy violation.
// Screenshots go to .browser-test/ (git-ignored). Ends with "N passed, N failed".
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { apiClient, seed } from "./lib/browser-seed.mjs";
import { FAKE_PROVIDER_KEY, startFakeProvider } from "./lib/fake-provider.mjs";
import { ROOT } from "./lib/wrangler.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const SHOTS = join(ROOT, ".browser-test");
const LOCAL_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** `npm run dev` on `port`: resolves with its API key once /health answers. */
function startDev(port, extra = []) {
  const child = spawn(process.execPath, [join(ROOT, "scripts", "dev.mjs"), "--port", String(port), ...extra], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  const collect = (chunk) => {
    out += chunk;
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const ready = (async () => {
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`npm run dev exited (${child.exitCode}):\n${out.slice(-3000)}`);
      const key = out.match(/API key:\s+(\S+)/)?.[1];
      if (key) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/health`);
          if (res.ok) return key;
        } catch {
          /* not listening yet */
        }
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`npm run dev did not answer within 180 s:\n${out.slice(-3000)}`);
  })();
  const stop = () => {
    if (child.exitCode !== null) return;
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      /* already gone */
    }
  };
  return { ready, stop, output: () => out };
}

const results = [];
async function check(name, fn) {
  const started = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`  ✓ ${name} (${Date.now() - started} ms)`);
  } catch (err) {
    results.push({ name, ok: false });
    console.log(`  ✗ ${name}\n    ${String(err?.stack ?? err).split("\n").slice(0, 6).join("\n    ")}`);
  }
}

/** Polls `probe` until it answers something truthy (at most 30 s), and answers that. */
async function until(what, probe) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

async function main() {
  if (!existsSync(CHROMIUM)) {
    console.error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
    process.exit(2);
  }
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  console.log(`Starting npm run dev on ${base}…`);
  // The playground's provider runs on this machine: the Worker may call a loopback address only
  // when ENDPOINT_ALLOW_PRIVATE_ADDRESSES says so (docs/configuration.md).
  const provider = await startFakeProvider();
  const dev = startDev(port, ["--var", "ENDPOINT_ALLOW_PRIVATE_ADDRESSES:true"]);
  const profile = mkdtempSync(join(tmpdir(), "promptedge-chromium-"));
  let context;
  const cleanup = async () => {
    await context?.close().catch(() => {});
    dev.stop();
    await provider.stop();
    rmSync(profile, { recursive: true, force: true });
  };
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => cleanup().then(() => process.exit(130)));
  try {
    const key = await dev.ready;
    const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    console.log("Seeding through the API…");
    const api = apiClient(base, key);
    const seeded = await seed(api, run);


    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1360, height: 900 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    const outside = [];
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (LOCAL_HOSTS.has(url.hostname)) return route.continue();
      outside.push(url.href);
      return route.abort("blockedbyclient");
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems = [];
    page.on("console", (m) => {
      const text = m.text();
      if (/Content Security Policy|Refused to/i.test(text)) problems.push(`CSP: ${text.slice(0, 300)}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message.slice(0, 300)}`));
    page.setDefaultTimeout(20_000);
    const shot = (name, clip) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false, clip });

    console.log("Console:");
    await check("asks for the API key once and keeps it out of the URL", async () => {
      await page.goto(`${base}/console`);
      await page.getByLabel("API key").fill(key);
      await page.getByRole("button", { name: "Open" }).click();
      await page.getByRole("link", { name: "Requests" }).waitFor();
      assert(!page.url().includes(key), "the key is in the URL");
      assert((await page.evaluate(() => Object.keys(localStorage).length)) === 0, "something was written to localStorage");
      await page.reload();
      await page.getByRole("link", { name: "Requests" }).waitFor();
    });

    await check("suggests tags and finds the logged requests by a tag filter", async () => {
      await page.goto(`${base}/console#/requests`);
      await page.getByRole("button", { name: "+ Add filter" }).click();
      const row = page.getByTestId("filter-row").first();
      await row.getByLabel("Field").selectOption("tags");
      await row.getByLabel("Operator").selectOption("contains");
      await row.getByLabel("Value").focus();
      // The value box offers the workspace's tags (the suggestions endpoint).
      await page.locator(`datalist option[value="${seeded.tag}"]`).waitFor({ state: "attached" });
      await row.getByLabel("Value").fill(seeded.tag);
      await page.getByRole("button", { name: "Search" }).click();
      const results = page.getByTestId("request-results");
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid="request-results"] tbody tr').length === n,
        seeded.logs.length,
      );
      for (const l of seeded.logs) await results.getByRole("link", { name: `#${l.id}`, exact: true }).waitFor();
      await shot("requests");
    });

    await check("narrows by a nested OR group, then by free text", async () => {
      const rowCount = (n) => page.waitForFunction((k) => document.querySelectorAll('[data-testid="request-results"] tbody tr').length === k, n);
      // tags contains <tag> AND (status is ERROR OR input tokens < 21): the first and the last log.
      await page.getByRole("button", { name: "+ Add group" }).click();
      const group = page.getByTestId("filter-group").nth(1);
      const first = group.getByTestId("filter-row").first();
      await first.getByLabel("Field").selectOption("status");
      await first.getByLabel("Value").selectOption("ERROR");
      await group.getByRole("button", { name: "+ Add filter" }).click();
      const second = group.getByTestId("filter-row").nth(1);
      await second.getByLabel("Field").selectOption("input_tokens");
      await second.getByLabel("Operator").selectOption("lt");
      await second.getByLabel("Value").fill("21");
      await page.getByRole("button", { name: "Search" }).click();
      await rowCount(2);
      const results = page.getByTestId("request-results");
      for (const l of [seeded.logs[0], seeded.logs[5]]) await results.getByRole("link", { name: `#${l.id}`, exact: true }).waitFor();
      // The README's picture (docs/console.png) is this one, compressed.
      await shot("requests-nested", { x: 0, y: 0, width: 1360, height: 620 });
      await page.getByLabel("Free text").fill("question number");
      await page.getByRole("button", { name: "Search" }).click();
      await rowCount(1);
      await results.getByRole("link", { name: `#${seeded.logs[5].id}`, exact: true }).waitFor();
    });

    await check("opens a request and shows its messages, with markup as text", async () => {
      await page.goto(`${base}/console#/requests/${seeded.logs[0].id}`);
      const detail = page.getByTestId("request-detail");
      await detail.waitFor();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 3);
      const text = await detail.innerText();
      assert(text.includes("You are a helpful assistant."), "the system message is missing");
      assert(text.includes("<script>window.__pwned = true</script>"), "the markup is not shown as text");
      assert(/system/i.test(text) && /user/i.test(text) && /assistant/i.test(text), "roles are missing");
      assert(text.includes(seeded.promptName), "the prompt link is missing");
      assert(!(await page.evaluate(() => "__pwned" in window)), "a logged <script> ran");
      assert((await detail.locator("script, img").count()) === 0, "logged markup became elements");
      await shot("request-detail");
    });

    await check("shows a tool call of an answer", async () => {
      await page.goto(`${base}/console#/requests/${seeded.logs[1].id}`);
      const call = page.getByTestId("tool-call");
      await call.waitFor();
      const text = await call.innerText();
      assert(text.includes("get_weather") && text.includes("Paris"), `tool call shown as ${text}`);
    });

    await check("opens a trace by id and shows its span tree in order, the failed span visible and its markup as text", async () => {
      const t = seeded.trace;
      await page.goto(`${base}/console#/traces`);
      // An id the API could not take is refused before any request.
      await page.getByLabel("Trace id").fill("not/an id");
      await page.getByRole("button", { name: "Open trace" }).click();
      await page.getByText("A trace id is 1 to 64 letters").waitFor();
      await page.getByLabel("Trace id").fill(t.traceId.toUpperCase());
      await page.getByRole("button", { name: "Open trace" }).click();
      await page.getByTestId("span-tree").waitFor();
      assert(page.url().endsWith(`#/traces/${t.traceId}`), `opened ${page.url()}`);
      const rows = await page
        .getByTestId("span-row")
        .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute("data-span-id"), Number(tr.getAttribute("data-depth"))]));
      const want = [
        [t.spans.root.id, 0],
        [t.spans.llm.id, 1],
        [t.spans.failed.id, 2],
        [t.spans.format.id, 1],
      ];
      assert(JSON.stringify(rows) === JSON.stringify(want), `tree rows ${JSON.stringify(rows)}, want ${JSON.stringify(want)}`);
      const failed = page.locator(`[data-testid="span-row"][data-span-id="${t.spans.failed.id}"]`);
      const failedText = await failed.innerText();
      assert(failedText.includes(t.spans.failed.name), `the failed span's name is not shown as text: ${failedText}`);
      assert(failedText.includes("ERROR") && failedText.includes("upstream reset the connection"), `the error is not visible: ${failedText}`);
      assert((await page.getByTestId("trace-errors").innerText()) === "1 error", "the summary does not count the error");
      assert((await page.getByTestId("trace-detail").locator("script, img").count()) === 0, "span markup became elements");
      assert(!(await page.evaluate(() => "__pwnedSpan" in window)), "a span's <script> ran");
      // Bars sit on one time scale: the LLM span starts 100 ms into a 1.2 s trace and lasts 800 ms.
      const bar = page.locator(`[data-testid="span-row"][data-span-id="${t.spans.llm.id}"] svg`);
      const [left, width] = [Number(await bar.getAttribute("data-left")), Number(await bar.getAttribute("data-width"))];
      assert(Math.abs(left - 8.333) < 0.01 && Math.abs(width - 66.667) < 0.01, `LLM bar at ${left}% width ${width}%`);
      // Folding the LLM span hides its failed child and says an error is inside.
      await page.getByRole("button", { name: `Collapse ${t.spans.llm.name}`, exact: true }).click();
      await failed.waitFor({ state: "detached" });
      await page.getByText("1 error inside").waitFor();
      await page.getByRole("button", { name: `Expand ${t.spans.llm.name}`, exact: true }).click();
      await failed.waitFor();
      await shot("trace");
    });

    await check("shows the selected span's attributes, events and times, and the LLM span links to its request", async () => {
      const t = seeded.trace;
      await page.getByTestId("span-tree").getByRole("link", { name: t.spans.failed.name, exact: true }).click();
      const detail = page.getByTestId("span-detail");
      await detail.getByTestId("span-error").getByText("upstream reset the connection").waitFor();
      const failedText = await detail.innerText();
      assert(failedText.includes("ConnectionResetError") && failedText.includes("<img src=x onerror=alert(1)>"), "the failed span's event or attribute is missing");
      // Its OTLP log record, the body's markup as text; the records of no span listed under the trace.
      const spanLogs = detail.getByTestId("span-logs");
      await spanLogs.getByText(t.records.failed).waitFor();
      assert((await spanLogs.innerText()).includes("ERROR"), "the record's severity is not shown");
      const failedRow = page.locator(`[data-testid="span-row"][data-span-id="${t.spans.failed.id}"]`);
      assert((await failedRow.getByTestId("span-log-count").innerText()) === "1 log", "the span's row does not count its record");
      const outside = page.getByTestId("trace-logs");
      await outside.getByText(t.records.outside).waitFor();
      assert((await outside.innerText()).includes("no span") && (await outside.innerText()).includes("WARN"), "the record outside the spans lacks its place or severity");
      assert((await page.getByTestId("trace-log-count").innerText()).trim() === "3", "the summary does not count the records");
      assert((await page.getByTestId("trace-detail").locator("b:not(.text), i").count()) === 0, "a record's markup became elements");
      await page.getByTestId("span-tree").getByRole("link", { name: t.spans.llm.name, exact: true }).click();
      await page.waitForFunction((id) => location.hash.endsWith(`?span=${id}`), t.spans.llm.id);
      await detail.getByText("gen_ai.request.model").waitFor();
      const text = await detail.innerText();
      for (const want of ["gpt-4o", "openai", t.question, "first token", "+350 ms into the trace", "800 ms", "+100 ms into the trace"])
        assert(text.includes(want), `the span detail lacks ${JSON.stringify(want)}`);
      await shot("trace-span");
      await detail.getByTestId("span-request-link").click();
      const request = page.getByTestId("request-detail");
      await request.waitFor();
      assert(page.url().endsWith(`#/requests/${t.requestLogId}`), `the link went to ${page.url()}`);
      await request.getByText(t.question).waitFor();
      await request.getByText("A span is one timed operation in a trace.").waitFor();
    });

    await check("a request made from a span links back to its trace, with that span selected", async () => {
      const t = seeded.trace;
      await page.goto(`${base}/console#/requests/${t.requestLogId}`);
      const link = page.getByTestId("request-trace-link");
      await link.waitFor();
      assert((await link.innerText()) === t.traceId, "the trace link does not name the trace");
      await link.click();
      await page.getByTestId("span-tree").waitFor();
      assert(page.url().endsWith(`#/traces/${t.traceId}?span=${t.spans.llm.id}`), `the link went to ${page.url()}`);
      await page.locator(`[data-testid="span-row"].selected[data-span-id="${t.spans.llm.id}"]`).waitFor();
      await page.getByTestId("span-detail").getByRole("heading", { name: t.spans.llm.name, exact: true }).waitFor();
      // A request logged directly has no trace, so no link.
      await page.goto(`${base}/console#/requests/${seeded.logs[2].id}`);
      await page.getByTestId("request-detail").waitFor();
      assert((await page.getByTestId("request-trace-link").count()) === 0, "a request without a trace links to one");
    });

    await check("lists recent traces by filters (as POST /api/public/v2/traces/search answers them) and opens one", async () => {
      const t = seeded.trace;
      await page.goto(`${base}/console#/traces`);
      await page.reload();
      const filters = page.getByTestId("trace-filters");
      const rowIds = () => page.getByTestId("trace-row").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-trace-id")));
      await page.getByTestId("trace-row").first().waitFor();
      await filters.getByLabel("Trace name").fill(t.spans.root.name);
      await filters.getByLabel("Trace status").selectOption("error");
      await filters.getByRole("button", { name: "Filter" }).click();
      await page.waitForFunction((id) => {
        const rows = [...document.querySelectorAll('[data-testid="trace-row"]')];
        return rows.length === 1 && rows[0].getAttribute("data-trace-id") === id;
      }, t.traceId);
      const row = page.locator(`[data-testid="trace-row"][data-trace-id="${t.traceId}"]`);
      const text = await row.innerText();
      assert(text.includes("1 error") && /\b4\b/.test(text) && text.includes("gpt-4o"), `trace row ${text}`);
      const group = { logic: "AND", filters: [{ field: "trace_status", operator: "is", value: "error" }, { field: "trace_name", operator: "contains", value: t.spans.root.name }] };
      const answer = await api("POST", "/api/public/v2/traces/search", { filter_group: group, limit: 25 });
      assert(JSON.stringify(answer.items.map((i) => i.trace_id)) === JSON.stringify(await rowIds()), "the list is not what the API answers");
      await filters.getByLabel("Trace status").selectOption("ok");
      await filters.getByRole("button", { name: "Filter" }).click();
      await page.getByText("No trace matches.").waitFor();
      await filters.getByLabel("Slower than (ms)").fill("slow");
      await filters.getByRole("button", { name: "Filter" }).click();
      await page.getByRole("alert").getByText(/trace_duration_ms|value/).first().waitFor();
      await filters.getByLabel("Slower than (ms)").fill("");
      await filters.getByLabel("Trace status").selectOption("error");
      await filters.getByRole("button", { name: "Filter" }).click();
      await shot("traces-list", { x: 0, y: 0, width: 1360, height: 700 });
      await row.getByRole("link").click();
      await page.getByTestId("span-tree").waitFor();
      assert(page.url().endsWith(`#/traces/${t.traceId}`), `opened ${page.url()}`);
    });

    await check("says so when a trace id has no span in the workspace", async () => {
      await page.goto(`${base}/console#/traces/${"0".repeat(31)}1`);
      await page.getByRole("alert").getByText(/not found/i).waitFor();
    });

    await check("finds a prompt template by name in the list, and lists the table", async () => {
      await page.goto(`${base}/console#/prompts`);
      await page.getByRole("searchbox", { name: "Name" }).fill(seeded.promptName);
      await page.getByRole("button", { name: "Find" }).click();
      await page.getByRole("link", { name: seeded.promptName, exact: true }).waitFor();
      await page.getByRole("searchbox", { name: "Name" }).fill(`${seeded.promptName}-no-such`);
      await page.getByRole("button", { name: "Find" }).click();
      await page.getByText("No template.").waitFor();
      await page.goto(`${base}/console#/tables`);
      await page.getByRole("link", { name: seeded.tableTitle, exact: true }).waitFor();
    });

    await check("diffs two prompt versions side by side and lists the release label", async () => {
      await page.goto(`${base}/console#/prompts/${seeded.promptId}`);
      const diff = page.getByTestId("prompt-diff");
      await diff.waitFor();
      await diff.locator("tr.diff-changed").first().waitFor();
      const changed = await diff.locator("tr.diff-changed").first().innerText();
      assert(changed.includes("You answer support questions.") && changed.includes("politely and briefly"), `changed line: ${changed}`);
      await page.getByTestId("release-labels").getByText("prod", { exact: true }).waitFor();
      await shot("prompt-diff");
    });

    await check("creates a template (snippet filled on demand) and filters the prompt list by folder", async () => {
      await page.goto(`${base}/console#/prompts`);
      await page.getByRole("combobox", { name: "Folder" }).selectOption({ label: seeded.folderName });
      await page.getByRole("link", { name: seeded.filedName, exact: true }).waitFor();
      assert((await page.getByRole("link", { name: seeded.promptName, exact: true }).count()) === 0, "the folder lists a template it does not hold");
      await page.getByRole("link", { name: "+ New template" }).click();
      const name = `${seeded.tag}-created`;
      await page.getByLabel("Template name").fill(name);
      await page.getByLabel("Text of message 1").fill(`@@@${seeded.snippetName}@@@ Be short.`);
      await page.getByLabel("Text of message 2").fill("Tell me about {topic}");
      await page.getByRole("button", { name: "Create template" }).click();
      await page.waitForFunction(() => /^#\/prompts\/\d+$/.test(location.hash));
      const id = Number(new URL(page.url()).hash.split("/").pop());
      const created = await api("GET", `/prompt-templates/${id}?version=1`);
      assert(created.prompt_name === name && created.metadata?.model?.name === "gpt-4o-mini", `created ${JSON.stringify(created).slice(0, 300)}`);
      assert(JSON.stringify(created.prompt_template.messages[1]).includes("Tell me about {topic}"), "the message text was not saved");
      // The snippet is shown filled, as the API fills it.
      await page.getByRole("button", { name: "Show v1 with snippets filled" }).click();
      await page.getByTestId("resolved").getByText("Always answer in French. Be short.").waitFor();
    });

    await check("edits a version: a bad commit message is refused next to its field and changes nothing; v3 is published with its model, parameters, tools and format", async () => {
      await page.goto(`${base}/console#/prompts/${seeded.promptId}`);
      await page.getByRole("heading", { name: seeded.promptName, exact: true }).waitFor();
      const editor = page.getByTestId("prompt-editor");
      await editor.waitFor();
      await page.getByLabel("Text of message 2").fill("Question from the editor: {question}");
      await page.getByLabel("Provider", { exact: true }).fill("openai");
      await page.getByLabel("Model", { exact: true }).fill("gpt-4o-mini");
      await page.getByLabel("Parameters").fill('{"temperature": 0.3}');
      await page.getByLabel("Tools").fill(JSON.stringify([{ type: "function", function: { name: "lookup_order", parameters: { type: "object", properties: {} } } }]));
      await page.getByLabel("Response format").fill('{"type": "json_object"}');
      await page.getByLabel("Commit message").fill("x".repeat(80));
      await page.getByRole("button", { name: "Publish as a new version" }).click();
      const fieldError = editor.locator('[data-field="prompt_version.commit_message"]');
      await fieldError.getByText("must be at most 72 characters").waitFor();
      await editor.screenshot({ path: join(SHOTS, "prompt-editor.png") });
      assert((await api("GET", `/prompt-templates/${seeded.promptId}`)).version === 2, "a refused publish made a version");
      await page.getByLabel("Commit message").fill("editor: model, tools, format");
      await page.getByRole("button", { name: "Publish as a new version" }).click();
      await page.getByRole("heading", { name: "Edit (a draft of v3)" }).waitFor();
      const v3 = await api("GET", `/prompt-templates/${seeded.promptId}?version=3`);
      assert(v3.commit_message === "editor: model, tools, format", `commit ${v3.commit_message}`);
      assert(JSON.stringify(v3.prompt_template.messages[1]).includes("Question from the editor: {question}"), "the text edit was not published");
      assert(v3.prompt_template.tools?.[0]?.function?.name === "lookup_order", "the tools were not published");
      assert(JSON.stringify(v3.metadata.model) === JSON.stringify({ provider: "openai", name: "gpt-4o-mini", parameters: { temperature: 0.3, response_format: { type: "json_object" } } }), `model ${JSON.stringify(v3.metadata.model)}`);
    });

    await check("moves a release label and creates another, then diffs v1 with v3", async () => {
      await page.goto(`${base}/console#/prompts/${seeded.promptId}`);
      const labels = page.getByTestId("release-labels");
      await labels.getByLabel("Version of prod").selectOption("3");
      await until("prod to move", async () => (await api("GET", `/prompt-templates/${seeded.promptId}/labels`)).release_labels.some((l) => l.release_label === "prod" && l.prompt_version_number === 3));
      await labels.getByLabel("New label").fill("staging");
      await labels.getByLabel("On version").selectOption("2");
      await labels.getByRole("button", { name: "Add label" }).click();
      await labels.getByText("staging", { exact: true }).waitFor();
      const { release_labels } = await api("GET", `/prompt-templates/${seeded.promptId}/labels`);
      const at = Object.fromEntries(release_labels.map((l) => [l.release_label, l.prompt_version_number]));
      assert(at.prod === 3 && at.staging === 2, `labels ${JSON.stringify(at)}`);
      await page.getByLabel("Left version").selectOption("1");
      await page.getByLabel("Right version").selectOption("3");
      await page.getByTestId("prompt-diff").getByText("Question from the editor: {question}").waitFor();
    });

    await check("says when no provider key is set, takes one, and streams a draft's run logged as a request of the template", async () => {
      // This local state may keep keys from an earlier run: start from none, the provider at this run's port.
      for (const v of (await api("GET", "/api/public/v2/env-vars")).workspace_env_vars) {
        if (["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"].includes(v.key)) await api("DELETE", `/api/public/v2/env-vars/${v.id}`);
      }
      await api("POST", "/api/public/v2/env-vars", { key: "OPENAI_BASE_URL", value: provider.baseUrl });
      await page.goto(`${base}/console#/prompts/${seeded.promptId}`);
      await page.reload();
      const playground = page.getByTestId("playground");
      await playground.getByTestId("no-provider-key").waitFor();
      await playground.getByLabel("Variable question").fill("where is my order?");
      await playground.getByRole("button", { name: "Run", exact: true }).click();
      await playground.getByText(/no OPENAI_API_KEY is set for this workspace/).first().waitFor();
      assert(provider.calls.length === 0, "a run without a key reached the provider");
      await playground.getByLabel("Key value").fill(FAKE_PROVIDER_KEY);
      await playground.getByRole("button", { name: "Save key" }).click();
      await playground.getByTestId("provider-keys").waitFor();
      const vars = (await api("GET", "/api/public/v2/env-vars")).workspace_env_vars;
      assert(vars.some((v) => v.key === "OPENAI_API_KEY" && v.value_suffix === FAKE_PROVIDER_KEY.slice(-4)), "the key was not stored");
      // The draft differs from v3 in its text: the run sends the draft.
      await page.getByLabel("Text of message 2").fill("Draft asks: {question}");
      await playground.getByRole("button", { name: "Run", exact: true }).click();
      const answer = playground.getByTestId("run-answer").first();
      // Text arrives before the run is done: the answer streams.
      await page.waitForFunction(() => {
        const a = document.querySelector('[data-testid="run-answer"]')?.textContent ?? "";
        return a.includes("answers:") && !document.querySelector('[data-testid="run-stats"]');
      });
      await playground.getByTestId("run-stats").waitFor();
      const text = await answer.innerText();
      assert(text === "gpt-4o-mini answers: Draft asks: where is my order?", `answer ${text}`);
      const stats = await playground.getByTestId("run-stats").innerText();
      assert(/tokens \d+ in · 8 out/.test(stats) && /cost \$0\.\d+/.test(stats) && /latency \d/.test(stats), `stats ${stats}`);
      const requestId = Number((await playground.getByTestId("run-request-link").innerText()).replace(/\D/g, ""));
      const log = await api("GET", `/api/public/v2/requests/${requestId}`);
      assert(log.prompt_id === seeded.promptId && log.prompt_version_number === null, `log links ${log.prompt_id} v${log.prompt_version_number}`);
      assert(log.tags.includes("playground") && log.prompt_input_variables.question === "where is my order?" && log.output_tokens === 8, `log ${JSON.stringify(log).slice(0, 300)}`);
      assert(provider.calls.at(-1).tools?.[0]?.function?.name === "lookup_order" && provider.calls.at(-1).response_format?.type === "json_object", "the run did not send the version's tools and format");
    });

    await check("compares two models side by side on the same variables, each run logged against v3", async () => {
      const playground = page.getByTestId("playground");
      await playground.getByRole("button", { name: "Compare side by side" }).click();
      await playground.getByLabel("Source of pane 1").selectOption("3");
      await playground.getByLabel("Source of pane 2").selectOption("3");
      await playground.getByLabel("Model of pane 2").fill("gpt-4o");
      await playground.getByRole("button", { name: "Run both" }).click();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="run-stats"]').length === 2);
      const answers = await playground.getByTestId("run-answer").allInnerTexts();
      assert(
        answers[0] === "gpt-4o-mini answers: Question from the editor: where is my order?" && answers[1] === "gpt-4o answers: Question from the editor: where is my order?",
        `answers ${JSON.stringify(answers)}`,
      );
      const ids = (await playground.getByTestId("run-request-link").allInnerTexts()).map((t) => Number(t.replace(/\D/g, "")));
      const logs = await Promise.all(ids.map((id) => api("GET", `/api/public/v2/requests/${id}`)));
      assert(logs.every((l) => l.prompt_id === seeded.promptId && l.prompt_version_number === 3), "a compared run is not linked to v3");
      assert(logs[0].model === "gpt-4o-mini" && logs[1].model === "gpt-4o" && logs[1].price > logs[0].price, `models ${logs.map((l) => `${l.model} ${l.price}`)}`);
      await playground.screenshot({ path: join(SHOTS, "playground.png") });
    });

    await check("shows a sheet's stale cells, and refreshes them while they recalculate", async () => {
      await page.goto(`${base}/console#/tables/${seeded.tableId}`);
      await page.getByTestId("sheet").waitFor();
      await page.locator('td[data-status="STALE"]').first().waitFor();
      await page.getByTestId("status-counts").locator(".status-stale", { hasText: /^stale 1$/ }).waitFor();
      await shot("sheet-stale");
      await page.getByRole("button", { name: "Recalculate stale" }).click();
      await page.waitForFunction(() => document.querySelectorAll('td[data-status="STALE"], td[data-status="QUEUED"], td[data-status="RUNNING"]').length === 0);
      await page.getByText("4", { exact: true }).first().waitFor();
    });

    await check("edits a sheet cell, adds a column (a bad type refused next to its field), and watches the stale cells recompute", async () => {
      await page.goto(`${base}/console#/tables/${seeded.tableId}`);
      await page.getByTestId("sheet").waitFor();
      const cell = page.locator("td.editable").first();
      const cellId = await cell.getAttribute("data-cell-id");
      await cell.click();
      await page.getByLabel("Cell value").fill("alpha beta gamma delta epsilon");
      await page.getByLabel("Cell value").press("Enter");
      await page.getByTestId("status-counts").locator(".status-stale", { hasText: /^stale 1$/ }).waitFor();
      const sheetPath = `/api/public/v2/tables/${seeded.tableId}/sheets/${seeded.sheetId}`;
      assert((await api("GET", `${sheetPath}/cells/${cellId}`)).cell.display_value === "alpha beta gamma delta epsilon", "the cell edit did not reach the API");
      const columnsBefore = (await api("GET", `${sheetPath}/columns`)).data.length;
      const add = page.getByTestId("add-column");
      await add.getByLabel("Column title").fill("Characters");
      await add.getByLabel("Column type").fill("NOT_A_TYPE");
      await add.getByRole("button", { name: "Add column" }).click();
      await add.locator('[data-field="type"]').waitFor();
      assert((await api("GET", `${sheetPath}/columns`)).data.length === columnsBefore, "a refused column was added");
      await add.getByLabel("Column type").fill("COUNT");
      await add.getByLabel("Column configuration").fill(JSON.stringify({ source: seeded.textColumnTitle, type: "chars" }));
      await add.getByRole("button", { name: "Add column" }).click();
      await page.locator("table.sheet-grid th", { hasText: "Characters" }).waitFor();
      const columns = (await api("GET", `${sheetPath}/columns`)).data;
      assert(columns.some((c) => c.title === "Characters" && c.type === "COUNT"), "the column is not in the API");
      await page.getByRole("button", { name: "Recalculate stale" }).click();
      await page.waitForFunction(() => document.querySelectorAll('td[data-status="STALE"], td[data-status="QUEUED"], td[data-status="RUNNING"]').length === 0, undefined, { timeout: 60_000 });
      const words = columns.find((c) => c.title === "Words");
      const rows = (await api("GET", `${sheetPath}/rows?include_columns=true`)).data;
      const row = rows.find((r) => r.cells[columns[0].id]?.id === cellId);
      assert(row.cells[words.id].status === "COMPLETED" && String(row.cells[words.id].value) === "5", `words cell ${JSON.stringify(row.cells[words.id])}`);
    });

    await check("lists the dataset and shows its rows", async () => {
      await page.goto(`${base}/console#/datasets`);
      await page.getByRole("link", { name: `${seeded.tag} dataset` }).first().click();
      await page.locator("table.sheet-grid tbody tr").first().waitFor();
      const rows = await page.locator("table.sheet-grid tbody tr").count();
      assert(rows === seeded.logs.length, `${rows} dataset rows`);
    });

    await check("shows an evaluation run's status and evaluated cells", async () => {
      await page.goto(`${base}/console#/evaluations/${seeded.runId}`);
      await page.getByTestId("run-status").waitFor();
      await page.waitForFunction(() => /completed \d/.test(document.querySelector('[data-testid="run-status"]')?.textContent ?? ""), undefined, {
        timeout: 60_000,
      });
      await page.locator('td[data-status="COMPLETED"]').first().waitFor();
      await shot("evaluation");
    });

    await check("starts an evaluation run from its pipeline and watches it complete", async () => {
      await page.goto(`${base}/console#/evaluations/${seeded.pipelineId}`);
      const form = page.getByTestId("start-run");
      await form.getByLabel("Run name").fill(`${seeded.tag} run from the console`);
      await form.getByRole("button", { name: "Start a run" }).click();
      await page.waitForFunction((p) => /^#\/evaluations\/\d+$/.test(location.hash) && !location.hash.endsWith(`/${p}`), seeded.pipelineId);
      const runId = Number(new URL(page.url()).hash.split("/").pop());
      await page.waitForFunction(() => /completed \d/.test(document.querySelector('[data-testid="run-status"]')?.textContent ?? ""), undefined, { timeout: 60_000 });
      const report = await api("GET", `/reports/${runId}`);
      assert(report.report.name === `${seeded.tag} run from the console` && report.report.parent_report_id === seeded.pipelineId, `run ${JSON.stringify(report.report).slice(0, 200)}`);
    });

    await check("makes a dataset from the search's results after previewing them", async () => {
      await page.goto(`${base}/console#/requests`);
      // A fresh page: the search kept from the earlier checks is gone.
      await page.reload();
      await page.getByRole("button", { name: "+ Add filter" }).first().click();
      const row = page.getByTestId("filter-row").first();
      await row.getByLabel("Field").selectOption("tags");
      await row.getByLabel("Operator").selectOption("contains");
      await row.getByLabel("Value").fill(seeded.tag);
      await page.getByLabel("Free text").fill("");
      await page.getByRole("button", { name: "Search" }).click();
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="request-results"] tbody tr').length === n, seeded.logs.length);
      await page.getByRole("button", { name: "Make a dataset from these results" }).click();
      const panel = page.getByTestId("dataset-from-search");
      const name = `${seeded.tag} from search`;
      await panel.getByLabel("New dataset name").fill(name);
      await panel.getByRole("button", { name: "Create dataset" }).click();
      await panel.getByLabel("Dataset", { exact: true }).locator("option", { hasText: name }).waitFor({ state: "attached" });
      await panel.getByLabel("Columns").fill("question, output");
      await panel.getByRole("button", { name: "Preview" }).click();
      await panel.getByTestId("rows-to-add").getByText(String(seeded.logs.length), { exact: true }).waitFor();
      await panel.getByRole("button", { name: "Fill the dataset" }).click();
      await panel.getByTestId("dataset-queued").waitFor();
      const groupId = Number(await panel.getByLabel("Dataset", { exact: true }).inputValue());
      const draft = await until("the dataset's fill", async () =>
        (await api("GET", `/api/public/v2/datasets?dataset_group_id=${groupId}`)).datasets.find((d) => d.version_number === -1 && d.job_status === "COMPLETED"),
      );
      const rows = await api("GET", `/api/public/v2/datasets/${draft.id}/rows?per_page=50`);
      assert(rows.total === seeded.logs.length && JSON.stringify(rows.columns) === '["question","output"]', `rows ${rows.total} ${JSON.stringify(rows.columns)}`);
    });

    await check("adds a request to a dataset, scores it (a bad score refused next to its field) and gives it metadata", async () => {
      const id = seeded.logs[3].id;
      await page.goto(`${base}/console#/requests/${id}`);
      const actions = page.getByTestId("request-actions");
      await actions.waitFor();
      const name = `${seeded.tag} picked`;
      await actions.getByLabel("New dataset name").fill(name);
      await actions.getByRole("button", { name: "Create dataset" }).click();
      await actions.getByLabel("Dataset", { exact: true }).locator("option", { hasText: name }).waitFor({ state: "attached" });
      await actions.getByRole("button", { name: "Add to the dataset's draft" }).click();
      await actions.getByTestId("added-to-dataset").waitFor();
      const groupId = Number(await actions.getByLabel("Dataset", { exact: true }).inputValue());
      const draft = (await api("GET", `/api/public/v2/datasets?dataset_group_id=${groupId}`)).datasets.find((d) => d.version_number === -1);
      assert((await api("GET", `/api/public/v2/datasets/${draft.id}/rows`)).total === 1, "the request is not in the draft");

      await actions.getByLabel("Score name").fill("helpfulness");
      assert(await actions.getByRole("button", { name: "Save score" }).isDisabled(), "an empty score can be saved (as 0)");
      await actions.getByLabel("Score", { exact: true }).fill("150");
      await actions.getByRole("button", { name: "Save score" }).click();
      await actions.locator('[data-field="score"]').getByText("must be from 0 to 100").waitFor();
      assert(!("helpfulness" in ((await api("GET", `/api/public/v2/requests/${id}`)).scores ?? {})), "a refused score was stored");
      await actions.getByLabel("Score", { exact: true }).fill("90");
      await actions.getByRole("button", { name: "Save score" }).click();
      await page.getByTestId("request-detail").getByText("helpfulness: 90").waitFor();
      await actions.getByLabel("Metadata key").fill("reviewed_by");
      await actions.getByLabel("Metadata value").fill("browser test");
      await actions.getByRole("button", { name: "Add metadata" }).click();
      await page.getByTestId("request-detail").getByText("browser test", { exact: true }).waitFor();
      const log = await api("GET", `/api/public/v2/requests/${id}`);
      assert(log.scores.helpfulness === 90 && log.metadata.reviewed_by === "browser test", `log ${JSON.stringify({ scores: log.scores, metadata: log.metadata })}`);
    });

    await check("draws the analytics charts", async () => {
      await page.goto(`${base}/console#/analytics`);
      await page.locator('[data-testid="chart"] canvas').first().waitFor();
      await shot("analytics");
    });

    console.log("/docs:");
    await check("renders the reference from /openapi.json with its own files only", async () => {
      await page.goto(`${base}/docs`);
      await page.getByText("PromptEdge API", { exact: true }).first().waitFor({ timeout: 60_000 });
      await page.getByText("request logs", { exact: true }).first().waitFor({ timeout: 60_000 });
      await page.getByText("Interactive API reference").first().waitFor();
      await shot("docs");
    });

    await check('sends the key entered in the reference as X-API-KEY from "try it"', async () => {
      // Scalar's own placeholder for an API key's value (its version is pinned in package.json).
      await page.locator('input[placeholder="QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT"]').first().fill(key);
      await page.getByRole("button", { name: "Open Group - prompt templates" }).click();
      await page.getByText("List prompt templates", { exact: true }).first().click();
      await page.locator("button", { hasText: "Test Request(get /prompt-templates)" }).first().click();
      const [request] = await Promise.all([
        page.waitForRequest((r) => new URL(r.url()).pathname === "/prompt-templates"),
        page.locator("button:visible", { hasText: "Send get request to" }).first().click(),
      ]);
      assert(request.headers()["x-api-key"] === key, "the request did not carry the key as X-API-KEY");
      const response = await request.response();
      assert(response?.status() === 200, `try it answered ${response?.status()}`);
      await shot("docs-try-it");
    });

    await check("no request left this machine and no Content-Security-Policy violation", async () => {
      assert(outside.length === 0, `requests to other hosts: ${outside.slice(0, 10).join(", ")}`);
      assert(problems.length === 0, problems.slice(0, 10).join("\n"));
    });
  } catch (err) {
    results.push({ name: "setup", ok: false });
    console.error(String(err?.stack ?? err));
  } finally {
    await cleanup();
  }
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  console.log(`Screenshots: ${SHOTS}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

await main();
