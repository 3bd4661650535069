// What the browser test puts into a local API before it opens the console: request logs (one whose
// text is markup, one that calls a tool), a prompt with two versions and a release label, a table
// whose computed cells went stale after an edit, a dataset with an evaluation run, and an OTLP trace
// whose LLM span becomes a request log, with OTLP log records of its spans and one outside them. Everything goes through the public API, as any client would
// send it.

/** A client for one base URL and key; every call that does not answer `ok` throws with its body. */
export function apiClient(base, key) {
  return async function api(method, path, body) {
    const res = await fetch(base + path, {
      method,
      headers: { "X-API-KEY": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : null;
  };
}

const text = (t) => [{ type: "text", text: t }];
const hex = (bytes) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

/** OTLP JSON's attribute list from a plain object (strings, numbers, lists of them). */
function otlpAttributes(obj) {
  const value = (v) =>
    Array.isArray(v)
      ? { arrayValue: { values: v.map(value) } }
      : Number.isInteger(v)
        ? { intValue: String(v) }
        : typeof v === "number"
          ? { doubleValue: v }
          : { stringValue: String(v) };
  return Object.entries(obj).map(([key, v]) => ({ key, value: value(v) }));
}

/**
 * A small trace sent as OTLP JSON to POST /v1/traces: a root span, a child LLM span with gen_ai.*
 * attributes (which becomes a request log), a grandchild that failed (its name is markup), and a
 * second child that starts before the grandchild (so the tree's order differs from the start-time
 * order). Sent out of order, as exporters may.
 */
export async function seedTrace(api, run, now = Date.now()) {
  const traceId = hex(16);
  const t0 = now - 5_000;
  const nanos = (ms) => (BigInt(Math.round(ms)) * 1_000_000n).toString();
  const spans = {
    root: { id: hex(8), name: `answer question ${run}` },
    llm: { id: hex(8), name: "chat gpt-4o" },
    failed: { id: hex(8), name: "POST /v1/chat/completions <script>window.__pwnedSpan = true</script>" },
    format: { id: hex(8), name: "format answer" },
  };
  const question = `What is a span? (${run})`;
  const otlpSpan = (s, parent, kind, from, to, attributes, extra = {}) => ({
    traceId,
    spanId: s.id,
    ...(parent ? { parentSpanId: parent.id } : {}),
    name: s.name,
    kind,
    startTimeUnixNano: nanos(t0 + from),
    endTimeUnixNano: nanos(t0 + to),
    attributes: otlpAttributes(attributes),
    ...extra,
  });
  const body = {
    resourceSpans: [
      {
        resource: { attributes: otlpAttributes({ "service.name": "browser-seed" }) },
        scopeSpans: [
          {
            scope: { name: "browser-seed", version: "1.0.0" },
            spans: [
              otlpSpan(spans.failed, spans.llm, 3, 150, 400, { "http.request.method": "POST", "http.response.body": "<img src=x onerror=alert(1)>" }, {
                status: { code: 2, message: "upstream reset the connection" },
                events: [
                  {
                    name: "exception",
                    timeUnixNano: nanos(t0 + 390),
                    attributes: otlpAttributes({ "exception.type": "ConnectionResetError", "exception.message": "upstream reset the connection" }),
                  },
                ],
              }),
              otlpSpan(spans.format, spans.root, 1, 120, 1150, { "app.step": "format" }),
              otlpSpan(spans.root, null, 2, 0, 1200, { "http.route": "/ask", "app.run": run }, { status: { code: 1 } }),
              otlpSpan(
                spans.llm,
                spans.root,
                3,
                100,
                900,
                {
                  "gen_ai.operation.name": "chat",
                  "gen_ai.provider.name": "openai",
                  "gen_ai.request.model": "gpt-4o",
                  "gen_ai.request.temperature": 0.2,
                  "gen_ai.usage.input_tokens": 12,
                  "gen_ai.usage.output_tokens": 9,
                  "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: question }] }]),
                  "gen_ai.output.messages": JSON.stringify([
                    { role: "assistant", parts: [{ type: "text", content: "A span is one timed operation in a trace." }], finish_reason: "stop" },
                  ]),
                },
                { events: [{ name: "first token", timeUnixNano: nanos(t0 + 350), attributes: [] }] },
              ),
            ],
          },
        ],
      },
    ],
  };
  const answer = await api("POST", "/v1/traces", body);
  if (answer?.partialSuccess?.rejectedSpans) throw new Error(`POST /v1/traces refused spans: ${JSON.stringify(answer.partialSuccess)}`);
  // Its OTLP log records (POST /v1/logs): the failed span's error, a record outside any span (both
  // markup that must stay text), and the LLM span's user message (its attributes win in its log).
  const records = { failed: "reset by <b>upstream</b> after 250 ms", outside: "cache cold for <i>this run</i>" };
  const record = (spanId, at, severityNumber, body, attributes = {}) => ({
    timeUnixNano: nanos(t0 + at),
    severityNumber,
    traceId,
    ...(spanId ? { spanId } : {}),
    body: { stringValue: body },
    attributes: otlpAttributes(attributes),
  });
  const logs = await api("POST", "/v1/logs", {
    resourceLogs: [
      {
        resource: { attributes: otlpAttributes({ "service.name": "browser-seed" }) },
        scopeLogs: [
          {
            scope: { name: "browser-seed" },
            logRecords: [
              record(null, 50, 13, records.outside),
              record(spans.llm.id, 110, 9, JSON.stringify({ content: question }), { "event.name": "gen_ai.user.message" }),
              record(spans.failed.id, 395, 17, records.failed, { "http.route": "/v1/chat/completions" }),
            ],
          },
        ],
      },
    ],
  });
  if (logs?.partialSuccess?.rejectedLogRecords) throw new Error(`POST /v1/logs refused records: ${JSON.stringify(logs.partialSuccess)}`);
  const trace = await api("GET", `/api/public/v2/traces/${traceId}`);
  const requestLogId = trace.spans.find((s) => s.span_id === spans.llm.id)?.request_log_id;
  if (!requestLogId) throw new Error(`the LLM span made no request log: ${JSON.stringify(trace.spans.map((s) => [s.name, s.request_log_id]))}`);
  return { traceId, spans, requestLogId, question, records };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(what, probe, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** Seeds everything under names carrying `run` (so runs against one local state do not collide). */
export async function seed(api, run) {
  const tag = `browser-${run}`;
  const now = Date.now();
  const iso = (ms) => new Date(ms).toISOString();
  const log = (i, input, output, extra = {}) =>
    api("POST", "/log-request", {
      provider: "openai",
      model: i % 2 ? "gpt-4o-mini" : "gpt-4o",
      input: { type: "chat", messages: input },
      output: { type: "chat", messages: output },
      request_start_time: iso(now - 60_000 * (10 - i)),
      request_end_time: iso(now - 60_000 * (10 - i) + 800 + 100 * i),
      input_tokens: 20 + i,
      output_tokens: 40 + i,
      price: 0.001 * (i + 1),
      tags: [tag, i % 2 ? "odd" : "even"],
      metadata: { session_id: `${tag}-s${i}`, user: `user-${i}` },
      prompt_name: promptName,
      prompt_version_number: i < 3 ? 1 : 2,
      prompt_input_variables: { question: `question ${i}` },
      ...extra,
    });
  // A prompt with two versions and a release label on the first.
  const promptName = `${tag}-support`;
  const blueprint = (system, user) => ({
    type: "chat",
    messages: [
      { role: "system", content: text(system) },
      { role: "user", content: text(user) },
    ],
    input_variables: ["question"],
  });
  const v1 = await api("POST", "/rest/prompt-templates", {
    prompt_template: { prompt_name: promptName, tags: [tag] },
    prompt_version: { prompt_template: blueprint("You answer support questions.", "Question: {question}"), commit_message: "first" },
  });
  const v2 = await api("POST", "/rest/prompt-templates", {
    prompt_template: { prompt_name: promptName },
    prompt_version: {
      prompt_template: blueprint("You answer support questions politely and briefly.", "Question: {question}"),
      commit_message: "politer",
    },
  });
  await api("POST", `/prompts/${v1.id}/label`, { prompt_version_number: 1, name: "prod" });
  // A folder holding one template, and a snippet the editor's new template uses.
  const folder = await api("POST", "/api/public/v2/folders", { name: `${tag} folder` });
  const filedName = `${tag}-filed`;
  await api("POST", "/rest/prompt-templates", {
    prompt_template: { prompt_name: filedName, folder_id: folder.folder.id },
    prompt_version: { prompt_template: blueprint("Filed away.", "{question}") },
  });
  const snippetName = `${tag}-snippet`;
  await api("POST", "/rest/prompt-templates", {
    prompt_template: { prompt_name: snippetName },
    prompt_version: { prompt_template: { type: "completion", content: text("Always answer in French.") } },
  });

  const markup = "<script>window.__pwned = true</script><img src=x onerror=alert(1)>";
  const logs = [];
  logs.push(
    await log(
      0,
      [
        { role: "system", content: text("You are a helpful assistant.") },
        { role: "user", content: text(`Please echo this ${markup}`) },
      ],
      [{ role: "assistant", content: text(`Echo: ${markup}`) }],
      { score: 80 },
    ),
  );
  logs.push(
    await log(
      1,
      [{ role: "user", content: text("What is the weather in Paris?") }],
      [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
        },
      ],
    ),
  );
  for (let i = 2; i < 6; i++) {
    logs.push(
      await log(i, [{ role: "user", content: text(`Question number ${i} about ${run}`) }], [{ role: "assistant", content: text(`Answer number ${i}`) }], {
        status: i === 5 ? "ERROR" : "SUCCESS",
        ...(i === 5 ? { error_type: "PROVIDER_TIMEOUT", error_message: "timed out" } : {}),
      }),
    );
  }

  // Searchable within seconds of their write (their search rows are written after the answer): the
  // dataset below and the console's tag filter read them.
  const byTag = { filter_group: { logic: "AND", filters: [{ field: "tags", operator: "contains", value: tag }] }, per_page: 25 };
  await until("the logs' indexing", async () => (await api("POST", "/api/public/v2/requests/search", byTag)).items.length === logs.length);

  // A table: a text column, a computed word count, computed once, then the text edited (stale).
  const table = await api("POST", "/api/public/v2/tables", { title: `${tag} table` });
  const tableId = table.table.id;
  const sheetId = table.default_sheet.id;
  const sheetPath = `/api/public/v2/tables/${tableId}/sheets/${sheetId}`;
  const columns = await api("GET", `${sheetPath}/columns`);
  const textColumn = (columns.columns ?? columns.data)[0];
  await api("POST", `${sheetPath}/rows`, { count: 2, values: [{ [textColumn.id]: "one two three" }, { [textColumn.id]: "four five" }] });
  await api("POST", `${sheetPath}/columns`, { title: "Words", type: "COUNT", config: { source: textColumn.title, type: "words" } });
  const op = await api("POST", `${sheetPath}/operations`, { operation: "recalculate" });
  if (op.operation_id) {
    await until("the recalculation", async () => {
      const o = await api("GET", `${sheetPath}/operations/${op.operation_id}`);
      return ["completed", "cancelled"].includes(o.operation.status);
    });
  }
  const rows = await api("GET", `${sheetPath}/rows?include_columns=true`);
  const firstTextCell = rows.data.map((r) => r.cells[textColumn.id]).find((c) => c && c.display_value);
  await api("PATCH", `${sheetPath}/cells/${firstTextCell.id}`, { display_value: "one two three four" });

  // A dataset from these logs (saved as version 1) and an evaluation pipeline with one run over it.
  const group = await api("POST", "/api/public/v2/dataset-groups", { name: `${tag} dataset` });
  const groupId = group.dataset_group?.id ?? group.id;
  await api("POST", "/api/public/v2/dataset-versions/from-filter-params", {
    dataset_group_id: groupId,
    filter_group: { logic: "AND", filters: [{ field: "tags", operator: "contains", value: tag }] },
    variables_to_parse: ["question", "output"],
  });
  await until("the dataset fill", async () => {
    const list = await api("GET", `/api/public/v2/datasets?dataset_group_id=${groupId}&per_page=10`);
    return list.datasets.some((d) => d.version_number === -1 && d.job_status === "COMPLETED");
  });
  await api("POST", "/api/public/v2/dataset-versions/save-draft", { dataset_group_id: groupId });
  const pipeline = await api("POST", "/reports", {
    dataset_group_id: groupId,
    name: `${tag} eval`,
    columns: [{ column_type: "COUNT", name: "answer words", configuration: { source: "output", type: "words" } }],
  });
  const evalRun = await api("POST", `/reports/${pipeline.report_id}/run`, { name: `${tag} run 1` });

  const trace = await seedTrace(api, run, now);

  return { folderName: `${tag} folder`, filedName, snippetName, textColumnTitle: textColumn.title, trace, groupId, pipelineId: pipeline.report_id, runId: evalRun.report_id, tag, logs, promptName, promptId: v1.id, versions: [v1, v2], tableId, sheetId, tableTitle: `${tag} table` };
}
