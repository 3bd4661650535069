// The request-log joins of dataset fills, previews and drafts must be planned as one primary-key
// lookup per id even when SQLite has no statistics (no ANALYZE ever ran, as on a fresh database):
// a workspace-index scan per chunk makes a 50,000-log fill take minutes. Request logs live in the log
// databases, so that is where the plans are asked for.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { LOGS_BY_IDS, logValuesSql } from "../../../src/logs";
import { insertLogRows } from "../../../src/services/datasets/fill";
import { SqlParams } from "../../../src/filters";

type PlanRow = { detail: string };

/** A log database (each shard has the same schema, from migrations-logs/). */
const logs = () => env.LOGS_0;

async function plan(sqlText: string, params: unknown[]): Promise<string[]> {
  const { results } = await logs().prepare(`EXPLAIN QUERY PLAN ${sqlText}`)
    .bind(...params)
    .all<PlanRow>();
  return results.map((r) => r.detail);
}

/** Every use of request_logs is a primary-key SEARCH, and nothing scans it (or its workspace index). */
function expectKeyLookups(details: string[]) {
  const onLogs = details.filter((d) => /\br\b|request_logs/.test(d) && !/json_each|dataset_rows|datasets/.test(d));
  expect(onLogs.length).toBeGreaterThan(0);
  for (const d of onLogs) expect(d).toMatch(/^SEARCH r USING INTEGER PRIMARY KEY \(rowid=\?\)/);
  expect(details.filter((d) => /^SCAN r\b/.test(d))).toEqual([]);
}

describe("dataset request-log joins without statistics", () => {
  it("the database has no sqlite_stat1 (the case the plans must survive)", async () => {
    const stat = await logs().prepare(`SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'`).first();
    expect(stat).toBeNull();
  });

  it("a fill chunk's values look each id up by primary key (default and named columns)", async () => {
    const ids = Array.from({ length: 100 }, (_, i) => i + 1);
    for (const vars of [null, ["input", "model", "topic"], ["model", "topic"]]) {
      const q = logValuesSql(1, ids, vars);
      expectKeyLookups(await plan(q.sql, q.params));
    }
  });

  it("a fill chunk's insert (into the control database) reads no log", async () => {
    const [insert] = insertLogRows(1, { datasetId: 2, jobId: 3, offset: 500 }, [{ at: 1, id: 8, v: "{}", promptId: null, promptVersion: null }]);
    const q = new SQLiteAsyncDialect().sqlToQuery(insert);
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).bind(...q.params).all<PlanRow>();
    expect(results.length).toBeGreaterThan(0);
    expect(results.map((r) => r.detail).filter((d) => /request_logs|\br\b/.test(d))).toEqual([]);
  });

  it("the preview's count, id page and values look ids up by primary key", async () => {
    const ids = JSON.stringify([5, 3, 9]);
    expectKeyLookups(await plan(`SELECT count(*) AS n FROM ${LOGS_BY_IDS("?1", "?2")}`, [ids, 1]));
    expectKeyLookups(await plan(`SELECT r.id FROM ${LOGS_BY_IDS("?1", "?2")} ORDER BY j.key LIMIT ?3`, [ids, 1, 10]));
    const p = new SqlParams();
    expectKeyLookups(await plan(`SELECT r.model AS v FROM ${LOGS_BY_IDS(p.add(ids), p.add(1))} ORDER BY j.key`, p.values));
  });

  it("the check catches the old form's plan (a plain JOIN scans the workspace's logs)", async () => {
    const details = await plan(`SELECT count(*) AS n FROM json_each(?) AS j JOIN request_logs AS r ON r.id = j.value AND r.workspace_id = ?`, ["[1,2]", 1]);
    // Documents why CROSS JOIN is used: without statistics, this form is not a key lookup per id.
    expect(details.some((d) => /^SEARCH r USING INTEGER PRIMARY KEY/.test(d))).toBe(false);
  });
});
