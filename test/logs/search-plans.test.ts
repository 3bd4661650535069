// Search plans and bounded totals on a workspace of logs with the benchmark's shape (the seeding SQL
// of bench:search, analyzed): no search statement scans request_logs, every count is bounded, and
// the searches the benchmark measures each read an index range narrower than the workspace.
import { beforeAll, describe, expect, it } from "vitest";
import { facetsSql, logsSql, START_MS } from "../../scripts/lib/seed-logs.mjs";
import { MATCHING_NOTHING } from "../../scripts/lib/bench-requests.mjs";
import { parseFilterGroup } from "../../src/filters";
import { filterEstimates, SEARCH_COUNT_CAP, searchQueries, walksScanIndex, type SearchInput } from "../../src/logs/search";
import { call, createWorkspace, json, logsDb, type TestKey } from "../helpers/api";
import { getDb } from "../../src/db/client";

const LOGS = 12_000;
let ws: TestKey;
/** The workspace's log database: where its logs are seeded and its search statements planned. */
let logs: D1Database;

async function run(sqlText: string) {
  // One statement per prepare: the seeding SQL is statements ending in ";" at a line end.
  const statements = sqlText.split(/;\s*\n/).map((s) => s.trim()).filter(Boolean);
  for (const s of statements) await logs.prepare(s).run();
}

beforeAll(async () => {
  ws = await createWorkspace();
  logs = await logsDb(ws);
  await run(`${logsSql(ws.workspaceId, 1, LOGS)}\n${facetsSql(ws.workspaceId)}\n`);
}, 120_000);

/** The three searches bench:search measures, and the plain listing. */
const SHAPES: Record<string, Omit<SearchInput, "page" | "per_page"> & { page?: number }> = {
  "every log, newest first": {},
  "expensive and recent, by cost desc": {
    filter_group: {
      logic: "AND",
      filters: [
        { field: "cost", operator: "gte", value: 0.9 },
        { field: "request_start_time", operator: "after", value: new Date(START_MS + 2 * 86_400_000).toISOString() },
      ],
    },
    sort_by: "cost",
    sort_order: "desc",
  },
  "metadata key and tag, newest first": {
    filter_group: {
      logic: "AND",
      filters: [
        { field: "metadata", operator: "key_equals", nested_key: "env", value: "prod" },
        { field: "tags", operator: "contains", value: "tag-42" },
      ],
    },
  },
  "nested OR of engines, errors and latency, page 3": {
    filter_group: {
      logic: "OR",
      filters: [
        { logic: "AND", filters: [{ field: "engine", operator: "in", value: ["model-3", "model-17"] }, { field: "status", operator: "is", value: "ERROR" }] },
        { logic: "AND", filters: [{ field: "provider_type", operator: "is", value: "google" }, { field: "latency_ms", operator: "gt", value: 5000 }] },
      ],
    },
    page: 3,
  },
};

async function plan(sqlText: string, params: unknown[]): Promise<string[]> {
  const { results } = await logs.prepare(`EXPLAIN QUERY PLAN ${sqlText}`).bind(...params).all<{ detail: string }>();
  return results.map((r) => r.detail);
}

async function inputOf(shape: (typeof SHAPES)[string]): Promise<SearchInput> {
  const raw = shape.filter_group;
  let filter_group = null;
  if (raw) {
    const parsed = parseFilterGroup(raw);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    filter_group = parsed.group;
  }
  return { ...shape, filter_group, page: shape.page ?? 1, per_page: 25 };
}

describe("search query plans (ANALYZEd logs of the benchmark's shape)", () => {
  for (const [name, shape] of Object.entries(SHAPES)) {
    it(`${name}: no statement scans request_logs, and the count is bounded`, async () => {
      const input = await inputOf(shape);
      const q = searchQueries(ws.workspaceId, input, await filterEstimates(getDb(logs), ws.workspaceId, input.filter_group));
      const page = await plan(q.pageSql, q.pageParams);
      const count = await plan(q.countSql, q.countParams);
      const label = `page:\n${page.join("\n")}\ncount:\n${count.join("\n")}`;
      for (const p of [page, count]) expect(p.filter((d) => /^SCAN (r|request_logs)\b/.test(d)), label).toEqual([]);
      expect(q.countSql, label).toMatch(new RegExp(`LIMIT ${SEARCH_COUNT_CAP + 1}\\)$`));
      if (shape.filter_group) {
        // A filtered count reads only its matches' index entries: a range narrower than the whole
        // workspace (more than workspace_id constrained), or log ids found through the side table.
        const reads = count.filter((d) => /^SEARCH (r|v)\b/.test(d));
        expect(reads.length, label).toBeGreaterThan(0);
        for (const d of reads) expect(d, label).toMatch(/\(workspace_id=\? AND |\(rowid=\?\)/);
      }
    });
  }
});

describe("search totals: exact up to the cap, a flagged lower bound past it", () => {
  const search = (body: unknown) => call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: body });

  it("counts exactly below the cap", async () => {
    const res = await search({ filter_group: SHAPES["nested OR of engines, errors and latency, page 3"].filter_group, per_page: 25 });
    const body = await json(res);
    expect(res.status).toBe(200);
    expect(body.total).toBeLessThan(SEARCH_COUNT_CAP);
    expect(body.total).toBeGreaterThan(0);
    expect(body.total_is_estimate).toBe(false);
    expect(body.pages).toBe(Math.ceil(body.total / 25));
  });

  it("stops counting at the cap: total is the cap, flagged, and the pages still lead on", async () => {
    const body = await json(await search({ per_page: 25 }));
    expect(body).toMatchObject({ total: SEARCH_COUNT_CAP, total_is_estimate: true, pages: SEARCH_COUNT_CAP / 25 + 1, has_next: true, next_num: 2 });
    // The last page inside the cap still has a next one, since more logs match.
    const last = await json(await search({ per_page: 25, page: SEARCH_COUNT_CAP / 25 }));
    expect(last).toMatchObject({ total_is_estimate: true, has_next: true, items: expect.any(Array) });
    expect(last.items).toHaveLength(25);
  });

  it("a page past the cap counts up to that page, and is exact again at the end", async () => {
    const lastPage = Math.ceil(LOGS / 25);
    const body = await json(await search({ per_page: 25, page: lastPage }));
    expect(body).toMatchObject({ total: LOGS, total_is_estimate: false, pages: lastPage, has_next: false, next_num: null });
    expect(body.items).toHaveLength(LOGS - (lastPage - 1) * 25);
    // One page earlier the count stops one match past that page: a lower bound again, flagged.
    const before = await json(await search({ per_page: 25, page: lastPage - 1 }));
    expect(before).toMatchObject({ total_is_estimate: true, total: (lastPage - 1) * 25, has_next: true, next_num: lastPage });
  });
});

describe("the two page plans (sorting every match, walking the scan index) give the same page", () => {
  const NOTHING = { filter_group: MATCHING_NOTHING.filter_group } as (typeof SHAPES)[string];
  const cases: [string, (typeof SHAPES)[string], number][] = [
    ["every log, page 7 (12,000 matches)", { page: 7 }, 25],
    ["the nested OR, page 1 (a few dozen matches)", { ...SHAPES["nested OR of engines, errors and latency, page 3"], page: 1 }, 25],
    ["the nested OR, one page of 10 (a few dozen matches)", { ...SHAPES["nested OR of engines, errors and latency, page 3"], page: 2 }, 10],
    ["expensive and recent, by cost", SHAPES["expensive and recent, by cost desc"], 25],
    ["an OR matching nothing", NOTHING, 25],
  ];
  for (const [name, shape, perPage] of cases) {
    it(name, async () => {
      const input = { ...(await inputOf(shape)), per_page: perPage };
      const q = searchQueries(ws.workspaceId, input, await filterEstimates(getDb(logs), ws.workspaceId, input.filter_group));
      const sorted = (await logs.prepare(q.pageSql).bind(...q.pageParams).all()).results;
      const walked = (await logs.prepare(q.walkSql).bind(...q.pageParams).all()).results;
      expect(walked).toEqual(sorted);
      if (name.includes("nothing")) expect(sorted).toEqual([]);
      else expect(sorted.length).toBeGreaterThan(0);
    });
  }

  it("the walk is chosen when many logs match for the page, the sort when few or none do", () => {
    // bench:targets' search 3 at 1M logs: about 4,000 matches, page 3 of 25.
    expect(walksScanIndex(4_000, 1_000_000, 75)).toBe(true);
    expect(walksScanIndex(SEARCH_COUNT_CAP + 1, 1_000_000, 25)).toBe(true);
    expect(walksScanIndex(0, 1_000_000, 25)).toBe(false);
    expect(walksScanIndex(400, 1_000_000, 75)).toBe(false);
    // A page the matches do not fill: the walk would read every log.
    expect(walksScanIndex(20, 20, 25)).toBe(false);
  });
});
