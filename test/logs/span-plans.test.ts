// An ingestion's statements (the checks before, the write batch, the read after, and the indexer's on
// the logs it made) must each find rows by
// key: a span by (workspace, trace, span), the ingestion's own spans by (workspace, ingest id), a log
// by (workspace, trace, span). A statement that reads every span or log of the workspace makes each
// export slower as the workspace grows (measured by bench:traces: from 20 ms of CPU an export to
// hundreds after a few thousand spans).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { indexLogs } from "../../src/logs";
import { ingestOtlp } from "../../src/services/ingest/traces";
import { decodeExport } from "../../src/traces/otlp";
import { createWorkspace, logsDb } from "../helpers/api";
import { WorkspaceLogs } from "../../src/logs/periods";

interface Recorded {
  sql: string;
  params: unknown[];
  /** The database the statement ran on (its plan is that database's). */
  d1: D1Database;
}

/** The D1 binding, recording every statement bound through it. */
function recording(d1: D1Database, out: Recorded[]): D1Database {
  const pass = <T extends object>(target: T, prop: string | symbol) => {
    const v = Reflect.get(target, prop);
    return typeof v === "function" ? v.bind(target) : v;
  };
  return new Proxy(d1, {
    get(target, prop) {
      if (prop !== "prepare") return pass(target, prop);
      return (sqlText: string) => {
        const stmt = target.prepare(sqlText);
        return new Proxy(stmt, {
          get(s, p) {
            if (p !== "bind") return pass(s, p);
            return (...params: unknown[]) => {
              out.push({ sql: sqlText, params, d1 });
              return s.bind(...params);
            };
          },
        });
      };
    },
  });
}

async function plan(r: Recorded): Promise<string[]> {
  const { results } = await r.d1.prepare(`EXPLAIN QUERY PLAN ${r.sql}`)
    .bind(...r.params)
    .all<{ detail: string }>();
  return results.map((x) => x.detail);
}

const hex = (len: number) => Array.from(crypto.getRandomValues(new Uint8Array(len / 2)), (b) => b.toString(16).padStart(2, "0")).join("");
const str = (key: string, v: string) => ({ key, value: { stringValue: v } });

/** An export of one trace: a plain parent and an LLM child with metadata (so the log has search rows and facets). */
async function exportBody() {
  const [traceId, parent, llm] = [hex(32), hex(16), hex(16)];
  const spans = [
    { traceId, spanId: parent, name: "handle", startTimeUnixNano: "1700000000000000000", endTimeUnixNano: "1700000003000000000" },
    {
      traceId,
      spanId: llm,
      parentSpanId: parent,
      name: "chat gpt-4o",
      startTimeUnixNano: "1700000001000000000",
      endTimeUnixNano: "1700000002000000000",
      attributes: [
        str("gen_ai.operation.name", "chat"),
        str("gen_ai.provider.name", "openai"),
        str("gen_ai.request.model", "gpt-4o"),
        str("gen_ai.conversation.id", "conv-1"),
        str("gen_ai.input.messages", JSON.stringify([{ role: "user", parts: [{ type: "text", content: "hello" }] }])),
      ],
    },
  ];
  const body = { resourceSpans: [{ resource: { attributes: [str("service.name", "svc")] }, scopeSpans: [{ spans }] }] };
  return decodeExport(new TextEncoder().encode(JSON.stringify(body)), "json");
}

describe("span ingestion plans", () => {
  it("no statement of an ingestion reads the workspace's spans or logs whole", async () => {
    const ws = await createWorkspace();
    const key = await env.DB.prepare("SELECT id FROM api_keys WHERE workspace_id = ?").bind(ws.workspaceId).first<{ id: number }>();
    const auth = { workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: key!.id };
    const recorded: Recorded[] = [];
    const logsD1 = await logsDb(ws);
    expect(logsD1).not.toBe(env.DB);
    const db = getDb(recording(env.DB, recorded));
    const logs = getDb(recording(logsD1, recorded));
    const outcome = await ingestOtlp(db, WorkspaceLogs.single(ws.workspaceId, logs), auth, await exportBody(), false);
    expect(outcome.rejectedSpans).toBe(0);
    // Then the indexer, on the log the ingestion made.
    expect(await indexLogs(logs, outcome.logIds)).toBe(1);
    // The write batch ran whole (the log, both link updates), and the indexer's (facets, the search entry, daily totals, the watermark).
    // Names as written, quoted (taken from the schema) or not, in drizzle's lower case or ours.
    const sqlText = recorded.map((r) => r.sql.replaceAll('"', "")).join("\n").toLowerCase();
    for (const what of ["insert into spans", "insert into request_logs", "update request_logs", "update spans"]) expect(sqlText).toContain(what);
    for (const what of ["insert into request_log_facets", "insert into request_log_search", "insert into request_log_daily", "update log_index_state"]) expect(sqlText).toContain(what);
    // Spans, logs and their side rows are the workspace's log database's.
    for (const r of recorded) if (/\b(spans|request_logs|request_log_\w+|trace_closures)\b/.test(r.sql)) expect(r.d1 === logsD1, r.sql.slice(0, 120)).toBe(true);

    const bad: string[] = [];
    for (const r of recorded) {
      for (const d of await plan(r)) {
        // A scan, or an index searched on the workspace alone, reads every span or log of it.
        if (/^SCAN (spans|request_logs|s|r|s2|r2)\b/.test(d) || /USING (COVERING )?INDEX \w+ \(workspace_id=\?\)$/.test(d)) bad.push(`${d}   in   ${r.sql.replace(/\s+/g, " ").slice(0, 160)}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
