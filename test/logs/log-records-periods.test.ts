// Log records and periods: a trace lives in one log database (the period it began in), so its
// records go where its spans are, its spans where its records are, and the join meets both there;
// a trace read over all periods shows them. Two real log databases, LOGS_0 the older period.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { WorkspaceLogs, type LogPeriod } from "../../src/logs/periods";
import { getTrace, ingestOtlp, ingestOtlpLogs } from "../../src/services/ingest/traces";
import { decodeExport } from "../../src/traces/otlp";
import { decodeLogsExport } from "../../src/traces/otlp-logs";
import { createWorkspace, type TestKey } from "../helpers/api";
import { hexOf, llm, nanos, str } from "../helpers/otlp";

const BASE = Date.UTC(2026, 1, 2, 10);
const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const period = (shard: "LOGS_0" | "LOGS_1"): LogPeriod => ({ shard, db: getDb(env[shard]), range: -1 });
const auth = (ws: TestKey) => ({ workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 });

const spanExport = (traceId: string, spanId: string) =>
  decodeExport(
    enc({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId, spanId, name: "chat m", kind: 3, startTimeUnixNano: nanos(BASE), endTimeUnixNano: nanos(BASE + 500), attributes: [str("gen_ai.operation.name", "chat"), ...llm("m", "openai", 1, 1)] },
              ],
            },
          ],
        },
      ],
    }),
    "json",
  );

const recordsExport = (traceId: string, spanId: string, text: string) =>
  decodeLogsExport(
    enc({
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                { timeUnixNano: nanos(BASE + 1), traceId, spanId, attributes: [str("event.name", "gen_ai.user.message")], body: { kvlistValue: { values: [{ key: "content", value: { stringValue: text } }] } } },
              ],
            },
          ],
        },
      ],
    }),
    "json",
    BASE,
  );

async function rowsIn(shard: "LOGS_0" | "LOGS_1", ws: TestKey, traceId: string) {
  const count = async (sql: string) => (await env[shard].prepare(sql).bind(ws.workspaceId, traceId).first<{ n: number }>())!.n;
  return {
    spans: await count("SELECT count(*) AS n FROM spans WHERE workspace_id = ? AND trace_id = ?"),
    records: await count("SELECT count(*) AS n FROM trace_log_records WHERE workspace_id = ? AND trace_id = ?"),
    input: (await env[shard].prepare("SELECT input_text AS t FROM request_logs WHERE workspace_id = ? AND trace_id = ?").bind(ws.workspaceId, traceId).first<{ t: string }>())?.t ?? null,
  };
}

describe("log records over periods", () => {
  it("records of a trace begun in an older period go there and join its log; read over both periods", async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    const control = getDb(env.DB);
    await ingestOtlp(control, new WorkspaceLogs(ws.workspaceId, [period("LOGS_0")]), auth(ws), await spanExport(t, s), false);
    // The workspace has moved on to LOGS_1 when the records come.
    const both = new WorkspaceLogs(ws.workspaceId, [period("LOGS_0"), period("LOGS_1")]);
    await ingestOtlpLogs(both, auth(ws), await recordsExport(t, s, "late words"));
    expect(await rowsIn("LOGS_0", ws, t)).toEqual({ spans: 1, records: 1, input: "late words" });
    expect(await rowsIn("LOGS_1", ws, t)).toEqual({ spans: 0, records: 0, input: null });
    const trace = await getTrace(both, ws.workspaceId, t);
    expect([trace.spans.length, trace.logs.map((l) => l.body)]).toEqual([1, [{ content: "late words" }]]);
  });

  it("a span whose records came in an older period goes to that period's database and makes its log with them", async () => {
    const ws = await createWorkspace();
    const [t, s] = [hexOf(32), hexOf(16)];
    await ingestOtlpLogs(new WorkspaceLogs(ws.workspaceId, [period("LOGS_0")]), auth(ws), await recordsExport(t, s, "early words"));
    const both = new WorkspaceLogs(ws.workspaceId, [period("LOGS_0"), period("LOGS_1")]);
    await ingestOtlp(getDb(env.DB), both, auth(ws), await spanExport(t, s), false);
    expect(await rowsIn("LOGS_0", ws, t)).toEqual({ spans: 1, records: 1, input: "early words" });
    expect(await rowsIn("LOGS_1", ws, t)).toEqual({ spans: 0, records: 0, input: null });
    // A new trace's records, with no span anywhere yet, go to the current period.
    const t2 = hexOf(32);
    await ingestOtlpLogs(both, auth(ws), await recordsExport(t2, hexOf(16), "fresh"));
    expect((await rowsIn("LOGS_1", ws, t2)).records).toBe(1);
  });
});
