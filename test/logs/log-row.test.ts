import { getTableColumns } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { requestLogs } from "../../src/db/schema";
import type { AuthContext } from "../../src/env";
import { JSON_LOG_COLUMNS, jsonLogRow, requestLogRow, type RequestLogInput } from "../../src/logs/log-row";
import { decodeBlueprints } from "../../src/logs/row-codec";

const auth: AuthContext = { workspaceId: 7, userId: 3, userEmail: "a@example.com", apiKeyId: 11 };
const noPrompt = { name: null, id: null, versionNumber: null, versionId: null };

function input(over: Partial<RequestLogInput> = {}): RequestLogInput {
  return {
    provider: "openai",
    model: "gpt-4o",
    input: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }] },
    output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "hi" }] }] },
    parameters: {},
    tags: ["a"],
    metadata: { k: "v" },
    prompt_input_variables: { x: 1 },
    input_tokens: 1,
    output_tokens: 2,
    price: 0.5,
    function_name: "openai.chat.completions.create",
    score: 0,
    status: "SUCCESS",
    request_start_time: 1_700_000_000_000,
    request_end_time: 1_700_000_000_250,
    ...over,
  };
}

const render = (q: { getSQL(): unknown } | Parameters<SQLiteSyncDialect["sqlToQuery"]>[0]) => new SQLiteSyncDialect().sqlToQuery(q as never).sql;

describe("requestLogRow: the one request_logs row", () => {
  const setByDb = ["id", "createdAt", "revision"];
  const newColumns = Object.keys(getTableColumns(requestLogs)).filter((k) => !setByDb.includes(k));

  it("sets every column a new log has, the same set for a log-request log and a span's log", () => {
    // POST /log-request: the span track-request named, no trace yet (write.ts).
    const logged = requestLogRow(auth, input({ span_id: "s1", group_id: 5 }), noPrompt, { traceId: null, spanId: "s1" });
    // A log made from a span (spans.ts): no group, its trace and span.
    const { group_id: _, ...spanLog } = input();
    const fromSpan = requestLogRow(auth, spanLog, { name: "p", id: 4, versionNumber: 2, versionId: 9 }, { traceId: "t1", spanId: "s2" });
    expect(Object.keys(logged).sort()).toEqual([...newColumns].sort());
    expect(Object.keys(fromSpan).sort()).toEqual([...newColumns].sort());
    // No column is left to a default by one path only: undefined would drop it from an INSERT.
    expect(Object.entries(logged).filter(([, v]) => v === undefined)).toEqual([]);
    expect(Object.entries(fromSpan).filter(([, v]) => v === undefined)).toEqual([]);
    expect(logged).toMatchObject({ groupId: 5, traceId: null, spanId: "s1", workspaceId: 7, createdBy: 3, apiKeyId: 11 });
    expect(fromSpan).toMatchObject({ groupId: null, traceId: "t1", spanId: "s2", promptName: "p", promptId: 4, promptVersionNumber: 2, promptVersionId: 9 });
  });

  it("starts the named scores from score and score_name; none for an unnamed 0", () => {
    expect(requestLogRow(auth, input({ score: 80, score_name: "quality" }), noPrompt, { traceId: null, spanId: null }).scores).toEqual({ quality: 80 });
    expect(requestLogRow(auth, input({ score: 80 }), noPrompt, { traceId: null, spanId: null }).scores).toEqual({ default: 80 });
    expect(requestLogRow(auth, input({ score: 0 }), noPrompt, { traceId: null, spanId: null }).scores).toEqual({});
  });

  it("stores times in whole milliseconds (span times come from nanoseconds)", () => {
    const row = requestLogRow(auth, input({ request_start_time: 1_700_000_000_000.4, request_end_time: 1_700_000_000_000.6 }), noPrompt, { traceId: null, spanId: null });
    expect([row.requestStartTime, row.requestEndTime]).toEqual([1_700_000_000_000, 1_700_000_000_001]);
  });

  it("stores the blueprints as row-codec encodes them, with the search columns they were encoded with", () => {
    const long = "refund policy for the order ".repeat(40);
    const row = requestLogRow(auth, input({ input: { type: "completion", content: [{ type: "text", text: long }] } }), noPrompt, { traceId: null, spanId: null });
    expect(row.body).toBeInstanceOf(Uint8Array);
    expect(row.inputText).toContain("refund policy");
    const decoded = decodeBlueprints({ input: row.input, output: row.output, parameters: row.parameters, body: row.body, inputText: row.inputText, outputText: row.outputText });
    expect(decoded.input).toEqual({ type: "completion", content: [{ type: "text", text: long }] });
  });
});

describe("the JSON form of the row (INSERT … SELECT … FROM json_each)", () => {
  const columns = render(JSON_LOG_COLUMNS.columns).split(", ");
  const values = render(JSON_LOG_COLUMNS.values).split(", ");

  it("lists every column the row sets, by SQL name, and the JSON row carries exactly those keys", () => {
    const row = requestLogRow(auth, input(), noPrompt, { traceId: "t", spanId: "s" });
    const sqlNames = Object.fromEntries(Object.entries(getTableColumns(requestLogs)).map(([k, c]) => [k, c.name]));
    expect(columns).toEqual(Object.keys(row).map((k) => sqlNames[k]));
    expect(Object.keys(jsonLogRow(row))).toEqual(columns);
    expect(values).toHaveLength(columns.length);
  });

  it("reads JSON columns as JSON, the body from hex, every other column as its value", () => {
    const read = Object.fromEntries(columns.map((c, n) => [c, values[n]]));
    expect(read.body).toBe("unhex(j.value ->> 'body')");
    for (const c of ["tags", "metadata", "prompt_input_variables", "scores", "extra_values", "redactions"]) expect(read[c]).toBe(`j.value -> '${c}'`);
    expect(read.provider).toBe("j.value ->> 'provider'");
    expect(read.trace_id).toBe("j.value ->> 'trace_id'");
    expect(columns.filter((c) => read[c].startsWith("j.value -> '"))).toHaveLength(6);
  });

  it("carries the body as hex and the rest as the row holds it", () => {
    const long = "invoice quarter revenue ".repeat(40);
    const row = requestLogRow(auth, input({ output: { type: "completion", content: [{ type: "text", text: long }] } }), noPrompt, { traceId: "t", spanId: "s" });
    const json = jsonLogRow(row);
    expect(json.body).toBe([...row.body!].map((b) => b.toString(16).padStart(2, "0")).join(""));
    expect(json.tags).toEqual(["a"]);
    expect(json.workspace_id).toBe(7);
    expect(jsonLogRow(requestLogRow(auth, input(), noPrompt, { traceId: "t", spanId: "s" })).body).toBeNull();
  });
});
