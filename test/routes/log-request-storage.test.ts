// The stored form of a log's blueprints (src/logs/row-codec.ts) seen from every reader: the API's
// read by id, free text, text filters, dataset values, sheet-import texts; for logs written through
// log-request and spans-bulk, and for legacy rows (JSON columns, no body).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { logValues } from "../../src/logs";
import { call, createWorkspace as createAnyWorkspace, json, logInControlDb, type TestKey } from "../helpers/api";
import { bulkSpan, logBody, text } from "../helpers/fixtures";
import { WorkspaceLogs } from "../../src/logs/periods";

import { indexNow } from "../helpers/logs";

/** The codec is the same on every database: these workspaces log into the control database, read here as env.DB. */
async function createWorkspace(): Promise<TestKey> {
  const w = await createAnyWorkspace();
  await logInControlDb(w);
  return w;
}

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});

const ODD = "Ünïcödé 日本語 🎉👩‍👩‍👧 مرحبا e\u0301 \u0000 tab\t \u2028 \"quoted\" \\slash\\";

function words(n: number, seed: number) {
  const vocab = ["refund", "invoice", "quarter", "ticket", "customer", "policy", "shipment", "the", "of", "and"];
  let x = seed;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return vocab[x % vocab.length];
  }).join(" ");
}

const chat = (system: string, user: string, answer: string) => ({
  input: { type: "chat", messages: [{ role: "system", content: text(system) }, { role: "user", content: text(user) }] },
  output: { type: "chat", messages: [{ role: "assistant", content: text(answer) }] },
});

async function logged(body: Record<string, unknown>, key = ws.key): Promise<number> {
  const res = await call("/log-request", { method: "POST", key, json: logBody(body) });
  const b = await json(res);
  expect(res.status, JSON.stringify(b).slice(0, 300)).toBe(201);
  await indexNow();
  return b.id;
}

async function readBack(id: number, key = ws.key) {
  const res = await call(`/api/public/v2/requests/${id}`, { key });
  expect(res.status).toBe(200);
  return json(res);
}

const storedRow = (id: number) =>
  env.DB.prepare("SELECT input, output, parameters, body IS NOT NULL AS compressed, length(body) AS body_bytes, input_text, output_text FROM request_logs WHERE id = ?")
    .bind(id)
    .first<{ input: string; output: string; parameters: string; compressed: number; body_bytes: number | null; input_text: string; output_text: string }>();

async function search(filters: unknown[], q?: string, key = ws.key) {
  const res = await call("/api/public/v2/requests/search", { method: "POST", key, json: { filter_group: { logic: "AND", filters }, ...(q ? { q } : {}), per_page: 100 } });
  expect(res.status).toBe(200);
  return ((await json(res)).items as { id: number }[]).map((i) => i.id);
}

async function previewValues(ids: number[], variables?: string[], key = ws.key) {
  const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key, json: { name: `set-${crypto.randomUUID().slice(0, 8)}` } }));
  const res = await call("/api/public/v2/dataset-versions/from-filter-params/preview", {
    method: "POST",
    key,
    json: { dataset_group_id: g.dataset_group.id, request_log_ids: ids, preview_rows: 100, ...(variables ? { variables_to_parse: variables } : {}) },
  });
  const b = await json(res);
  expect(res.status, JSON.stringify(b).slice(0, 300)).toBe(200);
  const columns = b.columns as string[];
  return (b.rows as { value: unknown }[][]).map((cells) => Object.fromEntries(columns.map((c, i) => [c, cells[i]?.value])));
}

describe("stored form: logs written through log-request", () => {
  it("a typical log is stored compressed (JSON columns empty) and every reader sees it as sent", async () => {
    const body = {
      ...chat(words(300, 1), `${words(40, 2)} zanzibarquest`, words(120, 3)),
      parameters: { temperature: 0.3, max_tokens: 800, response_format: { type: "text" } },
      prompt_input_variables: { topic: "refunds", n: 3 },
      tags: ["storage"],
    };
    const id = await logged(body);
    const row = await storedRow(id);
    expect(row).toMatchObject({ input: "", output: "", parameters: "", compressed: 1 });
    expect(row!.body_bytes).toBeLessThan(JSON.stringify(body.input).length / 4);
    const got = await readBack(id);
    expect(got.input).toEqual(body.input);
    expect(got.output).toEqual(body.output);
    expect(got.parameters).toEqual(body.parameters);
    expect(got.prompt_blueprint.prompt_template).toEqual(body.input);
    expect(got.prompt_blueprint.metadata.model.parameters).toEqual(body.parameters);
    // Free text and the text filters read the plain texts.
    expect(await search([], "zanzibarques")).toEqual([id]);
    expect(await search([{ field: "input_text", operator: "contains", value: "zanzibarquest" }])).toEqual([id]);
    expect(await search([{ field: "output_text", operator: "starts_with", value: words(3, 3) }])).toContain(id);
    // Dataset values: the default columns and the blueprint fields by name.
    const [dflt] = await previewValues([id]);
    expect(dflt).toEqual({ topic: "refunds", n: 3, input: body.input, output: words(120, 3) });
    const [named] = await previewValues([id], ["output_blueprint", "input", "model", "n"]);
    expect(named).toEqual({ output_blueprint: body.output, input: body.input, model: "gpt-4o", n: 3 });
    expect(Object.keys(named)).toEqual(["output_blueprint", "input", "model", "n"]);
  });

  it("unusual content round-trips exactly: unicode, NUL, tools, a JSON answer", async () => {
    const answer = JSON.stringify({ verdict: ODD, score: 0.5, nested: { list: [1, 2, 3] } });
    const body = {
      input: {
        type: "chat",
        messages: [
          { role: "system", content: text(`${ODD} ${words(200, 4)}`) },
          { role: "user", content: [{ type: "text", text: "part one " }, { type: "text", text: `part two ${ODD} end` }] },
        ],
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }],
      },
      output: { type: "chat", messages: [{ role: "assistant", content: text(answer) }] },
      parameters: { stop: ["\u0000", ODD] },
    };
    const id = await logged(body);
    // The texts hold a NUL, which D1 may not hand back as given: compressed without them (format 2).
    expect(await env.DB.prepare("SELECT hex(substr(body, 1, 1)) AS f FROM request_logs WHERE id = ?").bind(id).first("f")).toBe("02");
    const got = await readBack(id);
    expect(got.input).toEqual(body.input);
    expect(got.output).toEqual(body.output);
    expect(got.parameters).toEqual(body.parameters);
    expect(await search([{ field: "output", nested_key: "verdict", operator: "key_equals", value: ODD }])).toEqual([id]);
    expect(await search([{ field: "tool_names", operator: "contains", value: "lookup" }])).toContain(id);
  });

  it("a big log (about 900 KB) round-trips, with texts past the compression window", async () => {
    const messages = Array.from({ length: 120 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: text(words(1000, i + 100)) }));
    const body = { input: { type: "chat", messages }, output: { type: "chat", messages: [{ role: "assistant", content: text(words(500, 7)) }] }, parameters: { n: 1 } };
    expect(JSON.stringify(logBody(body)).length).toBeGreaterThan(800_000);
    const id = await logged(body);
    expect((await storedRow(id))!.compressed).toBe(1);
    const got = await readBack(id);
    expect(got.input).toEqual(body.input);
    expect(got.output).toEqual(body.output);
    const [values] = await previewValues([id], ["input"]);
    expect(values.input).toEqual(body.input);
  });

  it("small blueprints stay as JSON text (too little to gain), and read back", async () => {
    const body = { input: { type: "chat", messages: [] }, output: { type: "chat", messages: [] }, parameters: {} };
    const id = await logged(body);
    expect(await storedRow(id)).toMatchObject({ input: JSON.stringify(body.input), output: JSON.stringify(body.output), parameters: "{}", compressed: 0 });
    expect(await readBack(id)).toMatchObject(body);
    const [values] = await previewValues([id]);
    expect(values).toEqual({ input: body.input, output: "" });
  });
});

describe("stored form: legacy rows and other writers", () => {
  it("a row stored before the format (JSON columns, body NULL) reads the same everywhere", async () => {
    const b = chat("legacy system prompt", "legacy question quokkafind", "legacy answer");
    const params = { temperature: 1 };
    const row = await env.DB.prepare(
      `INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables,
         request_start_time, request_end_time, input_text, output_text, output_format)
       VALUES (?1, 'openai', 'gpt-4o', ?2, ?3, ?4, '[]', '{}', '{"v":"x"}', 1700000000000, 1700000001000, ?5, ?6, 'text') RETURNING id`,
    )
      .bind(ws.workspaceId, JSON.stringify(b.input), JSON.stringify(b.output), JSON.stringify(params), "legacy system prompt\nlegacy question quokkafind", "legacy answer")
      .first<{ id: number }>();
    const id = row!.id;
    // Past the watermark (waiting, as every new log), with no extra values: the indexer makes them from
    // its row, reading the blueprints in either form.
    expect(await env.DB.prepare("SELECT count(*) AS n FROM request_logs WHERE id = ? AND id > (SELECT indexed_to FROM log_index_state) AND extra_values IS NULL").bind(id).first("n")).toBe(1);
    await indexNow();
    const got = await readBack(id);
    expect(got).toMatchObject({ input: b.input, output: b.output, parameters: params });
    expect(await search([], "quokkafind")).toEqual([id]);
    expect(await previewValues([id])).toEqual([{ v: "x", input: b.input, output: "legacy answer" }]);
    expect(await previewValues([id], ["input", "output_blueprint", "input_text"])).toEqual([
      { input: b.input, output_blueprint: b.output, input_text: "legacy system prompt\nlegacy question quokkafind" },
    ]);
  });

  it("a log made from a span (spans-bulk) is stored compressed and reads back as sent", async () => {
    const other = await createWorkspace();
    const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join("");
    const [t, s] = [hex(32), hex(16)];
    const msgs = chat(words(200, 11), words(30, 12), words(80, 13));
    const res = await call("/spans-bulk", {
      method: "POST",
      key: other.key,
      json: {
        spans: [bulkSpan(t, s, { name: "llm", attributes: {}, log_request: { provider: "openai", model: "gpt-4o-mini", ...msgs, parameters: { temperature: 0.5 } } })],
      },
    });
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(201);
    const id = b.request_logs[0].id;
    expect((await storedRow(id))!.compressed).toBe(1);
    const got = await readBack(id, other.key);
    expect(got).toMatchObject({ input: msgs.input, output: msgs.output, parameters: { temperature: 0.5 } });
    // Another workspace sees nothing of it.
    expect((await call(`/api/public/v2/requests/${id}`, { key: ws.key })).status).toBe(404);
    expect(await previewValues([id])).toEqual([]);
  });
});

describe("logValues: dataset values as SQL built them from the plain JSON columns", () => {
  it("the same text, byte for byte, for a compressed log as the old SQL gives for its legacy twin", async () => {
    const body = {
      ...chat(words(150, 31), "what about pe-blueprint-0-input?", words(60, 32)),
      parameters: { temperature: 0.7 },
      prompt_input_variables: { topic: "x", nested: { a: [1, 2.5, "é"] }, input: "shadowed by the request field", "pe-blueprint-0-input": "not a placeholder" },
      price: 0.00001234,
      tags: ["a", "b"],
    };
    const id = await logged(body);
    expect((await storedRow(id))!.compressed).toBe(1);
    const twin = await env.DB.prepare(
      `INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables, price,
         request_start_time, request_end_time, input_text, output_text, output_format)
       SELECT workspace_id, provider, model, ?2, ?3, ?4, tags, metadata, prompt_input_variables, price, request_start_time, request_end_time, input_text, output_text, output_format
       FROM request_logs WHERE id = ?1 RETURNING id`,
    )
      .bind(id, JSON.stringify(body.input), JSON.stringify(body.output), JSON.stringify(body.parameters))
      .first<{ id: number }>();
    const old = async (expr: string) => (await env.DB.prepare(`SELECT ${expr} AS v FROM request_logs AS r WHERE r.id = ?`).bind(twin!.id).first<{ v: string }>())!.v;
    const db = WorkspaceLogs.single(ws.workspaceId, getDb(env.DB));
    const [dflt] = await logValues(db, ws.workspaceId, [id], null);
    expect(dflt.v).toBe(await old(`json_set(json(r.prompt_input_variables), '$.input', json(r.input), '$.output', r.output_text)`));
    const named = ["output_blueprint", "input", "price", "tags", "topic", "pe-blueprint-0-input"];
    const [v] = await logValues(db, ws.workspaceId, [id], named);
    expect(v.v).toBe(
      await old(
        `json_object('output_blueprint', json(r.output), 'input', json(r.input), 'price', r.price, 'tags', json(r.tags), 'topic', 'x', 'pe-blueprint-0-input', 'not a placeholder')`,
      ),
    );
    // Both forms side by side, in the order asked, another workspace's id skipped.
    const other = await createWorkspace();
    const both = await logValues(db, ws.workspaceId, [twin!.id, id, 999_999_999], named);
    expect(both.map((r) => r.id)).toEqual([twin!.id, id]);
    expect(both[0].v).toBe(both[1].v);
    expect(await logValues(WorkspaceLogs.single(other.workspaceId, getDb(env.DB)), other.workspaceId, [id], null)).toEqual([]);
  });

  it("big logs come back whole and in the order asked, read a few at a time (about 1.7 MB each by the page weight, 4 MB a page)", async () => {
    const big = (seed: number) => ({
      input: { type: "chat", messages: Array.from({ length: 100 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: text(words(1200, seed * 1000 + i)) })) },
      output: { type: "chat", messages: [{ role: "assistant", content: text(words(300, seed)) }] },
      prompt_input_variables: { seed },
    });
    const a = await logged(big(1));
    const small = await logged({ ...chat(words(100, 5), "q", "a"), prompt_input_variables: { seed: 0 } });
    const b = await logged(big(2));
    // The page weight logValues cuts by (datasets.ts): these ids do not fit one page.
    const weight = await env.DB.prepare(
      `SELECT sum(octet_length(input) + octet_length(output) + octet_length(parameters) + 8 * coalesce(octet_length(body), 0)
         + 2 * (octet_length(input_text) + octet_length(output_text) + octet_length(prompt_input_variables))) AS n FROM request_logs WHERE id IN (?, ?)`,
    )
      .bind(a, b)
      .first<number>("n");
    expect(weight! * 1.5).toBeGreaterThan(4 * 1024 * 1024);
    const db = WorkspaceLogs.single(ws.workspaceId, getDb(env.DB));
    // An id listed twice comes once, at its first place.
    const got = await logValues(db, ws.workspaceId, [a, small, b, a], ["prompt_input_variables", "input"]);
    expect(got.map((r) => [r.at, r.id])).toEqual([
      [0, a],
      [1, small],
      [2, b],
    ]);
    const parsed = got.map((r) => JSON.parse(r.v));
    expect(parsed.map((v) => v.prompt_input_variables.seed)).toEqual([1, 0, 2]);
    expect(parsed[0].input).toEqual(big(1).input);
    expect(parsed[2].input).toEqual(big(2).input);
  });
});
