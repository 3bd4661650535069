// Redaction end to end: a workspace with a policy (every detector, email hashed, the rest masked)
// sends each kind of personal data and secret through every way in (log-request, track-request, the
// tracking calls, spans-bulk, OTLP traces and logs, prompt runs), then reads it back through every
// read path (by id, search, free text, suggestions, analytics, export, the archive, datasets, sheets,
// webhook payloads, trace and span reads, OTLP log records). The raw values are nowhere: not in any
// answer, not in any row of any database (full-text index and suggestion counts included), not in R2.
// This file's storage is its own, so those scans see only what it stored.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { archiveOldLogs } from "../../src/logs/archive";
import { call, createWorkspace, json, logsOf, type TestKey } from "../helpers/api";
import { bulkSpan, logBody, text } from "../helpers/fixtures";
import { exportedBetween, filledIds, importedIds, searchAll, suggest } from "../helpers/log-reads";
import { indexNow } from "../helpers/logs";
import { hexOf, llm, sendSpans, str } from "../helpers/otlp";
import { hookKey, hookUrl, register, waitForInbox } from "../helpers/webhooks";
import { PLANTED, PLANTED_TEXT, type PlantedKind } from "../redaction/samples";

const RAW = Object.values(PLANTED);
/** Every detector once: what one copy of PLANTED_TEXT counts. */
const ONCE = Object.fromEntries(Object.keys(PLANTED).map((k) => [k, 1])) as Record<PlantedKind, number>;
const times = (n: number) => Object.fromEntries(Object.keys(PLANTED).map((k) => [k, n]));
const MASKED = ["[PAYMENT_CARD]", "[IBAN]", "[IP_ADDRESS]", "[NATIONAL_ID]", "[CREDENTIAL]", "[PHONE]"];

/** A value holds no planted value, whatever its shape (the credential's parts included). */
function expectClean(what: string, value: unknown) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  for (const raw of RAW) expect(text, `${what} holds ${raw.slice(0, 20)}…`).not.toContain(raw);
  expect(text, what).not.toContain("lovelace");
  expect(text, what).not.toContain("T3BlbkFJ");
}

/** The placeholders of one planted text: masks for all but the e-mail, a hash for it. */
function expectPlaceholders(what: string, value: unknown) {
  const text = JSON.stringify(value);
  for (const m of MASKED) expect(text, `${what}: ${m}`).toContain(m);
  expect(text, what).toMatch(/\[EMAIL:[0-9a-f]{10}\]/);
}

const START = Date.UTC(2024, 0, 10, 12);
let ws: TestKey;
const ids: Record<string, number> = {};
const traces: Record<string, string> = {};
let emailHash: string;

beforeAll(async () => {
  ws = await createWorkspace();
  const policy = {
    detectors: [
      { type: "email", action: "hash" },
      ...(["phone", "payment_card", "iban", "ip_address", "national_id", "credential"] as const).map((type) => ({ type, action: "mask" })),
    ],
  };
  expect((await call("/api/public/v2/redaction-policy", { method: "PUT", key: ws.key, json: policy })).status).toBe(200);
  const put = (path: string, body: unknown) => call(path, { method: "POST", key: ws.key, json: body });
  const at = (ms: number) => new Date(START + ms).toISOString();

  // POST /log-request: the text in a message, more in metadata, a tag and an input variable.
  let res = await put("/log-request", {
    ...logBody({ input: { type: "chat", messages: [{ role: "user", content: text(PLANTED_TEXT) }] } }),
    metadata: { phone: PLANTED.phone, plan: "pro" },
    tags: ["vip", PLANTED.email],
    prompt_input_variables: { card: PLANTED.payment_card },
    request_start_time: at(0),
    request_end_time: at(1000),
  });
  expect(res.status).toBe(201);
  ids.logRequest = (await json(res)).id;

  // The tracking calls add to it: metadata, then a prompt link with input variables.
  res = await put("/rest/track-metadata", { request_id: ids.logRequest, metadata: { iban: PLANTED.iban } });
  expect(res.status).toBe(200);
  const prompt = await json(
    await put("/rest/prompt-templates", {
      prompt_template: { prompt_name: "redacted-run" },
      prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: text("{text}") }], input_variables: ["text"] }, metadata: { model: { provider: "openai", name: "gpt-4o-mini", parameters: {} } } },
    }),
  );
  res = await put("/library-track-prompt", { api_key: ws.key, request_id: ids.logRequest, prompt_name: "redacted-run", prompt_input_variables: { who: PLANTED.national_id } });
  expect(res.status).toBe(200);

  // POST /track-request (what run() and the SDK's provider wrappers send).
  res = await put("/track-request", {
    function_name: "openai.chat.completions.create",
    provider_type: "openai",
    kwargs: { model: "gpt-4o", messages: [{ role: "user", content: PLANTED_TEXT }] },
    request_response: { id: "c", object: "chat.completion", created: 1, model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: "noted" }, finish_reason: "stop" }] },
    request_start_time: (START + 2000) / 1000,
    request_end_time: (START + 3000) / 1000,
  });
  const tracked = await json(res);
  expect(res.status, JSON.stringify(tracked)).toBe(200);
  // The answer shows the log as stored.
  expectClean("track-request's answer", tracked);
  ids.trackRequest = tracked.request_id;

  // POST /spans-bulk: the SDK's span with its log, and an event carrying an address.
  traces.bulk = hexOf(32);
  const bulkId = hexOf(16);
  res = await put("/spans-bulk", {
    spans: [
      bulkSpan(traces.bulk, bulkId, {
        name: "llm_call",
        attributes: { function_input: JSON.stringify({ text: PLANTED_TEXT }) },
        events: [{ name: "note", timestamp: "1700000001000000000", attributes: { who: PLANTED.email } }],
        log_request: { provider: "openai", model: "gpt-4o", input: { type: "chat", messages: [{ role: "user", content: text(PLANTED_TEXT) }] }, output: { type: "chat", messages: [{ role: "assistant", content: text("ok") }] } },
      }),
    ],
  });
  const bulk = await json(res);
  expect(res.status, JSON.stringify(bulk)).toBe(201);
  ids.spansBulk = bulk.request_logs[0].id;

  // POST /v1/traces: an LLM span whose prompt carries the text, its status message a key.
  traces.otlp = hexOf(32);
  const otlpSpan = hexOf(16);
  await sendSpans(ws, traces.otlp, START + 4000, [
    {
      id: otlpSpan,
      name: "chat gpt-4o",
      start: 0,
      end: 500,
      attrs: [...llm("gpt-4o", "openai", 10, 2), str("gen_ai.prompt", JSON.stringify([{ role: "user", content: PLANTED_TEXT }])), str("gen_ai.completion", JSON.stringify([{ role: "assistant", content: "fine" }])), str("enduser.id", PLANTED.email)],
    },
  ]);
  const otlpTrace = await json(await call(`/api/public/v2/traces/${traces.otlp}`, { key: ws.key }));
  ids.otlp = otlpTrace.spans[0].request_log_id;

  // POST /v1/logs: GenAI event records of a span (the conversation), then the span.
  traces.logs = hexOf(32);
  const logsSpan = hexOf(16);
  const event = (name: string, body: unknown, ms: number) => ({
    timeUnixNano: String(BigInt(START + 6000 + ms) * 1_000_000n),
    severityNumber: 9,
    traceId: traces.logs,
    spanId: logsSpan,
    attributes: [str("event.name", name), str("gen_ai.system", "openai")],
    body: { kvlistValue: { values: Object.entries(body as Record<string, string>).map(([key, v]) => ({ key, value: { stringValue: v } })) } },
  });
  res = await call("/v1/logs", {
    method: "POST",
    key: ws.key,
    json: {
      resourceLogs: [
        {
          resource: { attributes: [str("service.name", "chat")] },
          scopeLogs: [{ scope: { name: "@opentelemetry/instrumentation-openai" }, logRecords: [event("gen_ai.user.message", { content: PLANTED_TEXT }, 10), event("gen_ai.choice", { finish_reason: "stop" }, 20)] }],
        },
      ],
    },
  });
  expect(res.status).toBe(200);
  await sendSpans(ws, traces.logs, START + 6000, [{ id: logsSpan, name: "chat gpt-4o", start: 0, end: 500, attrs: llm("gpt-4o", "openai", 10, 2) }]);
  ids.otlpLogs = (await json(await call(`/api/public/v2/traces/${traces.logs}`, { key: ws.key }))).spans[0].request_log_id;

  // POST /api/public/v2/prompt-runs: the fake provider echoes the message, so the answer has it too.
  expect((await put("/api/public/v2/env-vars", { key: "OPENAI_API_KEY", value: "test-key" })).status).toBe(201);
  res = await put("/api/public/v2/prompt-runs", { prompt: { identifier: String(prompt.id) }, input_variables: { text: PLANTED_TEXT } });
  const run = await json(res);
  expect(res.status, JSON.stringify(run)).toBe(200);
  ids.promptRun = run.request_id;

  await indexNow();
  const stored = await json(await call(`/api/public/v2/requests/${ids.logRequest}`, { key: ws.key }));
  emailHash = /\[EMAIL:([0-9a-f]{10})\]/.exec(JSON.stringify(stored))![1];
}, 120_000);

describe("every way in", () => {
  it("stores the placeholders and hashes where the values were, and counts each detector's findings on the log", async () => {
    const get = async (id: number) => json(await call(`/api/public/v2/requests/${id}`, { key: ws.key }));
    const a = await get(ids.logRequest);
    expectClean("log-request", a);
    expectPlaceholders("log-request", a);
    expect(a.metadata).toEqual({ phone: "[PHONE]", plan: "pro", iban: "[IBAN]" });
    expect(a.tags).toEqual(["vip", `[EMAIL:${emailHash}]`]);
    expect(a.prompt_input_variables).toEqual({ who: "[NATIONAL_ID]" });
    // The message, the metadata, tag and variable sent with it, then track-metadata's and track-prompt's.
    expect(a.redactions).toEqual({ ...ONCE, email: 2, phone: 2, payment_card: 2, iban: 2, national_id: 2 });

    const b = await get(ids.trackRequest);
    expectPlaceholders("track-request", b);
    expect(b.redactions).toEqual(ONCE);

    const c = await get(ids.spansBulk);
    expectPlaceholders("spans-bulk", c);
    expect(c.redactions).toEqual(ONCE);

    const d = await get(ids.otlp);
    expectPlaceholders("/v1/traces", d.input);
    // The prompt, and the span's enduser.id (the log's user).
    expect(d.redactions).toEqual({ ...ONCE, email: 2 });

    const e = await get(ids.otlpLogs);
    expectPlaceholders("/v1/logs", e.input);
    // Found in the span's OTLP log record, counted on the log the record completes.
    expect(e.redactions).toEqual(ONCE);

    const f = await get(ids.promptRun);
    expectPlaceholders("prompt run", f);
    // The rendered message, the input variable and the provider's echo of it.
    expect(f.redactions).toEqual(times(3));
    for (const log of [a, b, c, d, e, f]) expectClean(`log ${log.request_id}`, log);
    // The same address hashes the same everywhere in the workspace.
    expect(JSON.stringify(f)).toContain(`[EMAIL:${emailHash}]`);
  });

  it("spans and OTLP log records are stored redacted too", async () => {
    for (const t of Object.values(traces)) {
      const trace = await json(await call(`/api/public/v2/traces/${t}`, { key: ws.key }));
      expectClean(`trace ${t}`, trace);
    }
    const bulk = await json(await call(`/api/public/v2/traces/${traces.bulk}`, { key: ws.key }));
    expect(bulk.spans[0].events[0].attributes.who).toBe(`[EMAIL:${emailHash}]`);
    expect(JSON.parse(bulk.spans[0].attributes.function_input).text).toContain("[CREDENTIAL]");
    const otlp = await json(await call(`/api/public/v2/traces/${traces.otlp}`, { key: ws.key }));
    expect(otlp.spans[0].attributes["enduser.id"]).toBe(`[EMAIL:${emailHash}]`);
    const records = await json(await call(`/api/public/v2/traces/${traces.logs}`, { key: ws.key }));
    expect(records.logs[0].body.content).toContain("[IBAN]");
  });
});

describe("every read path", () => {
  it("search, free text, the redaction filter and suggestions see only placeholders", async () => {
    const items = await searchAll(ws, {}, 100);
    expect(items).toHaveLength(6);
    expectClean("search", items);
    const q = async (words: string) => (await json(await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { q: words } }))).items.length;
    expect(await q("lovelace")).toBe(0);
    expect(await q("4111")).toBe(0);
    expect(await q("iban")).toBeGreaterThan(0);
    const filtered = await json(
      await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { filters: [{ field: "redactions", operator: "gte", nested_key: "payment_card", value: 2 }] }, per_page: 100 } }),
    );
    expect(filtered.items.map((i: { id: number }) => i.id).sort()).toEqual([ids.logRequest, ids.promptRun].sort());
    for (const [field, extra] of [["tags", {}], ["metadata_values", { metadata_key: "phone" }], ["input_variable_values", { metadata_key: "who" }], ["metadata_keys", {}]] as const) {
      const values = await suggest(ws, { field, ...extra });
      expectClean(`suggestions of ${field}`, values);
    }
    expect(await suggest(ws, { field: "tags" })).toContain(`[EMAIL:${emailHash}]`);
  });

  it("analytics count each detector's findings", async () => {
    const res = await call("/api/public/v2/requests/analytics/redactions", { method: "POST", key: ws.key, json: {} });
    const body = await json(res);
    expect(res.status).toBe(200);
    // Every log's counts added up (by id above): 2+1+1+1+1+3 cards, 1+1+1+1+1+3 credentials, 2+1+1+2+1+3 e-mails.
    expect(body.totals).toEqual({ email: 10, phone: 9, payment_card: 9, iban: 9, ip_address: 8, national_id: 9, credential: 8 });
    expect(body.series.every((s: { redacted: number }) => s.redacted > 0)).toBe(true);
  });

  it("the export, datasets, sheets and webhook payloads hold no raw value", async () => {
    expectClean("export", await exportedBetween(ws, 0, Date.now() + 1000));
    const hook = hookKey();
    await register(ws, { url: hookUrl(hook), events: ["dataset_version_created_from_filter_params", "sheet_created_from_request_logs"] });
    const fromDataset = await filledIds(ws, { variables_to_parse: ["request_log_id", "input", "output", "metadata", "tags"] } as never).catch(() => null);
    expect(fromDataset === null || fromDataset.length > 0).toBe(true);
    const datasets = await json(await call("/api/public/v2/datasets?per_page=100&status=all", { key: ws.key }));
    for (const d of datasets.datasets) expectClean(`dataset ${d.id}`, await json(await call(`/api/public/v2/datasets/${d.id}/rows?per_page=100`, { key: ws.key })));
    expect(await importedIds(ws, {})).toHaveLength(6);
    const received = await waitForInbox(hook, 1);
    expectClean("webhook payloads", received);
  }, 120_000);

  it("the archive holds none (R2), and a log read back from it is as stored", async () => {
    const before = await json(await call(`/api/public/v2/requests/${ids.logRequest}`, { key: ws.key }));
    await call("/api/public/v2/workspace/log-retention", { method: "PUT", key: ws.key, json: { days: 1 } });
    const run = await archiveOldLogs(getDb(env.DB), logsOf, env.BLOBS, { fileMaxLogs: 100, fileMaxBytes: 10_000_000, runMaxFiles: 10 }, START + 30 * 86_400_000);
    expect(run.logs).toBeGreaterThan(0);
    const after = await json(await call(`/api/public/v2/requests/${ids.logRequest}`, { key: ws.key }));
    expect(after).toEqual(before);
    const listed = await env.BLOBS.list();
    expect(listed.objects.length).toBeGreaterThan(0);
    for (const o of listed.objects) {
      const obj = await env.BLOBS.get(o.key);
      const bytes = new Uint8Array(await obj!.arrayBuffer());
      const text = o.key.endsWith(".gz") ? new TextDecoder().decode(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer()) : new TextDecoder().decode(bytes);
      expectClean(`R2 ${o.key}`, text);
    }
  });

  it("no row of any database holds a raw value: logs, side rows, full-text index, facets, spans, records, idempotency answers, events, audit", async () => {
    for (const [name, d1] of [["DB", env.DB], ["LOGS_0", env.LOGS_0], ["LOGS_1", env.LOGS_1]] as const) {
      const tables = await d1.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'").all<{ name: string }>();
      for (const { name: table } of tables.results) {
        const rows = await d1.prepare(`SELECT * FROM "${table}"`).all();
        const text = JSON.stringify(rows.results, (_, v) => (v instanceof ArrayBuffer || ArrayBuffer.isView(v) ? String.fromCharCode(...new Uint8Array(v as ArrayBuffer)) : Array.isArray(v) && v.every((x) => typeof x === "number") && v.length > 64 ? String.fromCharCode(...v) : v));
        expectClean(`${name}.${table}`, text);
      }
    }
  });
});
