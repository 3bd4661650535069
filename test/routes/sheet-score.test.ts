// A sheet's score: configuring it (columns by id or title, booleans and numbers, true/false values,
// aggregation), calculating it on the alarm after pending cells and in ranges of rows (starting over
// when the sheet changes), the score history across versions, saved versions carrying the score,
// every limit on both sides, every bad input a 4xx and workspace isolation.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_SCORE_COLUMNS, SCORE_RANGE_ROWS, queueCalculation, rowScore, scoreValue, stepScore } from "../../src/sheets/score";
import { SheetStore } from "../../src/sheets/storage";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, newSheet, patchCell, rows, type SheetRef } from "../helpers/sheet-data";

const stubOf = (s: SheetRef) => env.SHEETS.get(env.SHEETS.idFromName(s.sheetId));

/** Queues a calculation without setting the alarm, so the test runs each step itself. */
async function queueByHand(s: SheetRef) {
  await runInDurableObject(stubOf(s), (_o, state) => state.storage.transactionSync(() => queueCalculation(new SheetStore(state.storage), Date.now())));
}

/** One alarm run's worth of score work; answers whether work remains. */
async function stepByHand(s: SheetRef) {
  return runInDurableObject(stubOf(s), (_o, state) => state.storage.transactionSync(() => stepScore(new SheetStore(state.storage), Date.now())));
}

function configure(s: SheetRef, body: unknown, key = s.ws.key) {
  return call(`${s.base}/score`, { method: "PATCH", key, json: body });
}

async function configured(s: SheetRef, body: unknown) {
  const res = await configure(s, body);
  const b = await json(res);
  if (res.status !== 200) throw new Error(`configure: ${res.status} ${JSON.stringify(b)}`);
  return b;
}

async function getScore(s: SheetRef) {
  const res = await call(`${s.base}/score`, { key: s.ws.key });
  if (res.status !== 200) throw new Error(`score: ${res.status} ${await res.text()}`);
  return json(res);
}

/** Queues a calculation and waits for it to end. */
async function calculate(s: SheetRef, timeoutMs = 20_000) {
  const res = await call(`${s.base}/score`, { method: "POST", key: s.ws.key });
  const b = await json(res);
  if (res.status !== 202) throw new Error(`calculate: ${res.status} ${JSON.stringify(b)}`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const score = await getScore(s);
    if (score.status === "completed" || score.status === "failed") return score;
    if (Date.now() > deadline) throw new Error(`score still ${score.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function sheetVersion(s: SheetRef) {
  return (await json(await call(s.base, { key: s.ws.key }))).sheet.version_count as number;
}

/** A sheet whose Column A holds `values` from row 1 (row 0 is the blank sheet's empty row). */
async function sheetOf(values: string[]) {
  const ws = await createWorkspace();
  const s = await newSheet(ws);
  await addRows(s, { count: values.length, values: values.map((v) => ({ [s.columnA]: v })) });
  return s;
}

describe("reading cells as scores", () => {
  const t = new Set(["true", "yes"]);
  const f = new Set(["false", "no"]);
  const cell = (display: string | null, value: string | null = null, status = "COMPLETED") => ({ status, display_value: display, value });
  it("takes booleans, true/false texts without regard to case, numbers and numeric text; nothing else", () => {
    expect(scoreValue(cell("true", "true"), "auto", t, f)).toEqual({ kind: "bool", v: true });
    expect(scoreValue(cell(" YES "), "auto", t, f)).toEqual({ kind: "bool", v: true });
    expect(scoreValue(cell("No"), "auto", t, f)).toEqual({ kind: "bool", v: false });
    expect(scoreValue(cell("0.75"), "auto", t, f)).toEqual({ kind: "num", v: 0.75 });
    expect(scoreValue(cell("3", "3"), "auto", t, f)).toEqual({ kind: "num", v: 3 });
    expect(scoreValue(cell("-1e2"), "numeric", t, f)).toEqual({ kind: "num", v: -100 });
    for (const c of [cell("maybe"), cell(""), cell(null), cell("{}", "{}"), cell("true", "true", "STALE"), cell("1", null, "FAILED"), undefined]) {
      expect(scoreValue(c, "auto", t, f)).toBeNull();
    }
  });

  it("boolean takes 1 and 0 but no other number; numeric takes no boolean", () => {
    expect(scoreValue(cell("1"), "boolean", t, f)).toEqual({ kind: "bool", v: true });
    expect(scoreValue(cell("0", "0"), "boolean", t, f)).toEqual({ kind: "bool", v: false });
    expect(scoreValue(cell("2"), "boolean", t, f)).toBeNull();
    expect(scoreValue(cell("true", "true"), "numeric", t, f)).toBeNull();
    expect(scoreValue(cell("yes"), "numeric", t, f)).toBeNull();
  });

  it("combines a row's columns: all is the least, any the greatest, mean the mean", () => {
    expect(rowScore([1, 0, 1], "all")).toBe(0);
    expect(rowScore([1, 0, 1], "any")).toBe(1);
    expect(rowScore([1, 0, 0.5], "mean")).toBe(0.5);
    expect(rowScore([], "mean")).toBeNull();
  });
});

describe("configuring and calculating the score", () => {
  it("has no score before it is configured", async () => {
    const s = await sheetOf(["true"]);
    expect(await getScore(s)).toMatchObject({
      success: true,
      sheet_id: s.sheetId,
      scoring_type: null,
      columns: [],
      aggregate_score: null,
      overall_score: null,
      total_rows: 2,
      scored_rows: 0,
      excluded_rows: 0,
      calculated_at: null,
      score_matrix: null,
      status: null,
      score_configuration: null,
      score_type: "none",
      has_custom_scoring: false,
    });
  });

  it("configures (one new sheet version, nothing queued), then calculates a pass rate over a column of booleans", async () => {
    const s = await sheetOf(["true", "False", "yes", "maybe"]);
    const before = await sheetVersion(s);
    const res = await configure(s, { column_names: ["column a"] });
    expect(res.status).toBe(200);
    const conf = await json(res);
    expect(conf).toEqual({
      success: true,
      message: expect.any(String),
      score_configuration_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: null,
      requires_recalculation: true,
      version: before + 1,
    });
    expect(await sheetVersion(s)).toBe(before + 1);
    const pending = await getScore(s);
    expect(pending).toMatchObject({ status: null, score_type: "single_column", scoring_type: "auto", columns: [{ column_id: s.columnA, title: "Column A", score: null }] });
    expect(pending.score_configuration).toEqual({
      score_type: "auto",
      score_config: { column_ids: [s.columnA], true_values: ["true", "yes", "y", "pass", "passed"], false_values: ["false", "no", "n", "fail", "failed"], assertion_aggregation: "mean" },
    });

    const q = await call(`${s.base}/score`, { method: "POST", key: s.ws.key });
    expect(q.status).toBe(202);
    expect(await json(q)).toEqual({ success: true, score_configuration_id: conf.score_configuration_id, status: "queued" });
    // The calculation is no change to the sheet.
    expect(await sheetVersion(s)).toBe(before + 1);
    const score = await calculate(s);
    expect(score).toMatchObject({
      status: "completed",
      aggregate_score: 2 / 3,
      overall_score: 2 / 3,
      total_rows: 5,
      scored_rows: 3,
      excluded_rows: 2,
      score_calculation_error: null,
      columns: [{ column_id: s.columnA, title: "Column A", score: 2 / 3, included_count: 3, excluded_count: 2, resolved_scoring_type: "boolean" }],
      score_matrix: [["Column A", 2 / 3, 3, 2]],
      details: { score_configuration_id: conf.score_configuration_id, sheet_version: before + 1, current_sheet_version: before + 1, is_stale: false },
      aggregate: { score: 2 / 3, method: "mean", scored_rows: 3, total_rows: 5, excluded_rows: 2 },
    });
    expect(score.per_column[s.columnA]).toMatchObject({ true_count: 2, false_count: 1, numeric_count: 0, min: 0, max: 1 });
    expect(score.score_matrix_metrics.map((m: any) => m.key)).toEqual(["column", "score", "included_count", "excluded_count"]);
    expect(new Date(score.calculated_at).toISOString()).toBe(score.calculated_at);

    // An edit makes the score stale; the numbers stay until it is calculated again.
    const page = await rows(s);
    await patchCell(s, page.data[4].cells[s.columnA].id, { display_value: "pass" });
    expect((await getScore(s)).details.is_stale).toBe(true);
    expect((await calculate(s)).aggregate_score).toBe(3 / 4);
  });

  it("averages numbers, combines columns by assertion_aggregation, and takes columns by id and title together", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const B = (await addColumn(s, { title: "B", type: "TEXT" })).column.id;
    await addRows(s, {
      count: 3,
      values: [
        { [s.columnA]: "1", [B]: "true" },
        { [s.columnA]: "0", [B]: "true" },
        { [s.columnA]: 0.5, [B]: "no" },
      ],
    });
    await configured(s, { column_ids: [s.columnA], column_names: ["B"], assertion_aggregation: "all" });
    let score = await calculate(s);
    expect(score).toMatchObject({ score_type: "multi_column", scored_rows: 3, excluded_rows: 1 });
    expect(score.aggregate_score).toBeCloseTo((1 + 0 + 0) / 3);
    expect(score.columns.map((c: any) => [c.title, c.score, c.resolved_scoring_type])).toEqual([
      ["Column A", 0.5, "numeric"],
      ["B", 2 / 3, "boolean"],
    ]);
    await configured(s, { score_type: "auto", score_config: { column_ids: [s.columnA, B], assertion_aggregation: "any" } });
    score = await calculate(s);
    expect(score.aggregate_score).toBeCloseTo((1 + 1 + 0.5) / 3);
    await configured(s, { column_ids: [s.columnA, B] });
    expect((await calculate(s)).aggregate_score).toBeCloseTo((1 + 0.5 + 0.25) / 3);
    // numeric leaves out the booleans, boolean leaves out 0.5.
    await configured(s, { score_type: "numeric", column_ids: [s.columnA, B] });
    score = await calculate(s);
    expect(score.columns.map((c: any) => c.included_count)).toEqual([3, 0]);
    await configured(s, { score_type: "boolean", column_ids: [s.columnA] });
    score = await calculate(s);
    expect(score.columns[0]).toMatchObject({ included_count: 2, score: 0.5 });
  });

  it("reads texts as booleans through true_values and false_values", async () => {
    const s = await sheetOf(["👍", "👎", "👍", "true"]);
    await configured(s, { score_type: "boolean", column_ids: [s.columnA], true_values: ["👍"], false_values: ["👎"] });
    const score = await calculate(s);
    expect(score).toMatchObject({ aggregate_score: 2 / 3, scored_rows: 3 });
    expect(score.details).toMatchObject({ true_values: ["👍"], false_values: ["👎"] });
  });

  it("waits for queued cells, so it scores the recalculation asked before it", async () => {
    const s = await sheetOf(["12", "3", "40"]);
    const gt = (await addColumn(s, { title: "big", type: "MATH_OPERATOR", config: { sources: ["Column A"], operator: "gt", value: 10 } })).column.id;
    await configured(s, { column_ids: [gt] });
    const op = await call(`${s.base}/operations`, { method: "POST", key: s.ws.key, json: { column_ids: [gt] } });
    expect(op.status).toBe(202);
    const score = await calculate(s);
    // Row 0 (empty) fails the block and is left out; 12 and 40 pass, 3 does not.
    expect(score).toMatchObject({ aggregate_score: 2 / 3, scored_rows: 3, excluded_rows: 1 });
  });

  it(`scores ${SCORE_RANGE_ROWS} rows in one alarm run, one more row takes two, and a change meanwhile starts it over`, async () => {
    for (const total of [SCORE_RANGE_ROWS, SCORE_RANGE_ROWS + 1]) {
      const ws = await createWorkspace();
      const s = await newSheet(ws);
      await runInDurableObject(stubOf(s), (_o, state) => {
        const sql = state.storage.sql;
        sql.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) INSERT INTO rows (row_index, created_at) SELECT i, 1 FROM n`, total);
        sql.exec(`INSERT INTO cells (row_index, column_seq, status, display_value, updated_at) SELECT row_index, 1, 'COMPLETED', CASE WHEN row_index % 4 = 0 THEN 'false' ELSE 'true' END, 1 FROM rows`);
        sql.exec(`UPDATE sheet_meta SET value = ? WHERE key IN ('next_row_index', 'row_count')`, total);
      });
      await configured(s, { column_ids: [s.columnA] });
      await queueByHand(s);
      const more = await stepByHand(s);
      const first = await getScore(s);
      if (total === SCORE_RANGE_ROWS) {
        expect(more).toBe(false);
        expect(first).toMatchObject({ status: "completed", total_rows: total, scored_rows: total, aggregate_score: 0.75 });
        continue;
      }
      expect(more).toBe(true);
      expect(first.status).toBe("running");
      // An edit between runs: the next run starts over, at the new version.
      const edited = await patchCell(s, (await rows(s, "?limit=1")).data[0].cells[s.columnA].id, { display_value: "true" });
      const v = (await json(edited)).version;
      expect(await stepByHand(s)).toBe(true);
      expect((await getScore(s)).status).toBe("running");
      expect(await stepByHand(s)).toBe(false);
      const done = await getScore(s);
      expect(done).toMatchObject({ status: "completed", total_rows: total, details: { sheet_version: v, is_stale: false } });
      expect(done.per_column[s.columnA].true_count).toBe(total - Math.floor((total - 1) / 4));
    }
  }, 60_000);

  it("a calculation of a configuration replaced meanwhile is dropped; a scored column deleted fails it", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const B = (await addColumn(s, { title: "B", type: "TEXT" })).column.id;
    await configured(s, { column_ids: [B] });
    expect((await call(`${s.base}/columns/${B}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    const res = await call(`${s.base}/score`, { method: "POST", key: ws.key });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/deleted; configure the score again/);
    await configured(s, { column_ids: [s.columnA] });
    await queueByHand(s);
    await configured(s, { column_names: ["Column A"] });
    expect((await getScore(s)).status).toBeNull();
    expect(await stepByHand(s)).toBe(false);
    const C = (await addColumn(s, { title: "C", type: "TEXT" })).column.id;
    await configured(s, { column_ids: [C] });
    await queueByHand(s);
    expect((await call(`${s.base}/columns/${C}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    expect(await stepByHand(s)).toBe(false);
    expect(await getScore(s)).toMatchObject({ status: "failed", score_calculation_error: expect.stringMatching(/was deleted/) });
  });
});

describe("refusals", () => {
  it("a 400 naming the field for every malformed configuration; a 404 for an unknown column; nothing changes", async () => {
    const s = await sheetOf(["true"]);
    const before = await sheetVersion(s);
    for (const [body, status, message] of [
      [{}, 400, /^column_ids: give at least one column/],
      [{ column_ids: [] }, 400, /^column_ids/],
      [{ column_ids: ["nope"] }, 400, /^column_ids\[0\]: must be a UUID/],
      [{ column_ids: "x" }, 400, /^column_ids/],
      [{ column_names: [""] }, 400, /^column_names\[0\]/],
      [{ column_ids: [crypto.randomUUID()] }, 404, /^column_ids\[0\]: no column/],
      [{ column_names: ["nothing"] }, 404, /^column_names\[0\]: no column titled "nothing"/],
      [{ score_type: "custom", column_ids: [s.columnA] }, 400, /^score_type: custom scoring code/],
      [{ column_ids: [s.columnA], code: "return 1" }, 400, /^code: custom scoring code/],
      [{ score_type: "weird", column_ids: [s.columnA] }, 400, /^score_type/],
      [{ score_config: { column_ids: [s.columnA] } }, 400, /^score_type: is required when score_config/],
      [{ score_type: "auto", score_config: { column_ids: [s.columnA], threshold: 3 } }, 400, /^score_config: has unknown keys: threshold/],
      [{ score_type: "auto", score_config: "x" }, 400, /^score_config/],
      [{ column_ids: [s.columnA], assertion_aggregation: "most" }, 400, /^assertion_aggregation/],
      [{ column_ids: [s.columnA], true_values: ["ok"], false_values: ["OK"] }, 400, /^true_values: "ok" is also one of false_values/],
      [{ column_ids: [s.columnA], true_values: [""] }, 400, /^true_values\[0\]/],
      [{ column_ids: [s.columnA], true_values: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 400, /^true_values: must have at most 50/],
      [{ column_ids: [s.columnA], code_language: "RUBY" }, 400, /^code_language/],
    ] as const) {
      const res = await configure(s, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      const b = await json(res);
      expect(b.success).toBe(false);
      expect(b.message, JSON.stringify(body)).toMatch(message);
    }
    const bad = await call(`${s.base}/score`, { method: "PATCH", key: s.ws.key, body: "{", headers: { "Content-Type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(await sheetVersion(s)).toBe(before);
    expect((await getScore(s)).score_configuration).toBeNull();
    expect((await configure(s, { column_ids: [s.columnA], true_values: Array.from({ length: 50 }, (_, i) => `t${i}`) })).status).toBe(200);
  });

  it(`scores at most ${MAX_SCORE_COLUMNS} columns, by ids and titles together`, async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const ids: string[] = [s.columnA];
    for (let i = 1; i <= MAX_SCORE_COLUMNS; i++) ids.push((await stubOf(s).addColumn({ title: `c${i}`, type: "TEXT" })).column.id);
    let res = await configure(s, { column_ids: ids });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^column_ids: must have at most 50/);
    res = await configure(s, { column_ids: ids.slice(0, 25), column_names: ids.slice(25).map((_, i) => `c${25 + i}`) });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/names 51 columns; a score reads at most 50/);
    res = await configure(s, { column_ids: ids.slice(0, 25), column_names: ids.slice(25, 50).map((_, i) => `c${25 + i}`) });
    expect(res.status).toBe(200);
    // A column named twice (by id and by title) counts once.
    res = await configure(s, { column_ids: ids.slice(0, 50), column_names: ["Column A"] });
    expect(res.status).toBe(200);
  });

  it("calculating before configuring is a 400", async () => {
    const s = await sheetOf(["true"]);
    const res = await call(`${s.base}/score`, { method: "POST", key: s.ws.key });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^score: is not configured/);
  });

  it("another workspace's table or sheet is a 404 on every score route; a deleted sheet too", async () => {
    const s = await sheetOf(["true"]);
    await configured(s, { column_ids: [s.columnA] });
    const other = await createWorkspace();
    expect((await call(`${s.base}/score`, { key: other.key })).status).toBe(404);
    expect((await configure(s, { column_ids: [s.columnA] }, other.key)).status).toBe(404);
    expect((await call(`${s.base}/score`, { method: "POST", key: other.key })).status).toBe(404);
    expect((await call(`${s.base}/versions/score-history`, { key: other.key })).status).toBe(404);
    const theirs = await newSheet(other);
    expect((await call(`/api/public/v2/tables/${theirs.tableId}/sheets/${s.sheetId}/score`, { key: s.ws.key })).status).toBe(404);
    // Their sheet does not take my column.
    expect((await configure(theirs, { column_ids: [s.columnA] })).status).toBe(404);
    expect((await call(s.base, { method: "DELETE", key: s.ws.key })).status).toBe(200);
    expect((await call(`${s.base}/score`, { key: s.ws.key })).status).toBe(404);
    expect((await call(`${s.base}/versions/score-history`, { key: s.ws.key })).status).toBe(404);
  });
});

describe("score history and saved versions", () => {
  it("has one point per sheet version with a score, naming the saved version made there; versions carry their score and configuration", async () => {
    const s = await sheetOf(["true", "false"]);
    let b = await json(await call(`${s.base}/versions/score-history`, { key: s.ws.key }));
    expect(b).toEqual({ success: true, score_history: { points: [], total_points: 0, returned_points: 0, resolution: "raw", range: "all", max_points: 1200, is_sampled: false } });
    await configured(s, { column_ids: [s.columnA] });
    const first = await calculate(s);
    // Calculated twice at one sheet version: one point, the latest.
    await calculate(s);
    const v1 = (await json(await call(`${s.base}/versions`, { method: "POST", key: s.ws.key, json: { name: "half" } }))).version;
    expect(v1.score).toMatchObject({ score: 0.5, scored_rows: 2, total_rows: 3 });
    expect(v1.score_configuration).toEqual(first.score_configuration);
    const page = await rows(s);
    await patchCell(s, page.data[2].cells[s.columnA].id, { display_value: "true" });
    await calculate(s);
    b = await json(await call(`${s.base}/versions/score-history`, { key: s.ws.key }));
    expect(b.score_history).toMatchObject({ total_points: 2, returned_points: 2, is_sampled: false, resolution: "raw" });
    expect(b.score_history.points).toEqual([
      expect.objectContaining({ sheet_version: v1.metadata.sheet_version, version_id: v1.id, version_number: 1, version_name: "half", score: 0.5 }),
      expect.objectContaining({ sheet_version: v1.metadata.sheet_version + 1, version_id: null, version_number: null, score: 1 }),
    ]);
    // The list and one version show the score of their content.
    const listed = await json(await call(`${s.base}/versions`, { key: s.ws.key }));
    expect(listed.data[0].score.score).toBe(0.5);

    // A restore brings back the version's score configuration.
    await configured(s, { column_names: ["Column A"], score_type: "numeric" });
    await call(`${s.base}/versions`, { method: "POST", key: s.ws.key, json: { source_version_id: v1.id } });
    const after = await getScore(s);
    expect(after.score_configuration.score_type).toBe("auto");
    expect((await calculate(s)).aggregate_score).toBe(0.5);
  });

  it("keeps the last N points by range and samples to max_points by min and max per bucket, or keeps the latest with raw", async () => {
    const s = await sheetOf(["true"]);
    await configured(s, { column_ids: [s.columnA] });
    await runInDurableObject(stubOf(s), (_o, state) => {
      const cfg = JSON.parse(state.storage.sql.exec<{ config: string }>(`SELECT config FROM score_settings`).one().config);
      for (let i = 1; i <= 120; i++) {
        const result = { aggregate_score: (i % 10) / 10, total_rows: 2, scored_rows: 1, excluded_rows: 1, columns: [] };
        state.storage.sql.exec(
          `INSERT INTO score_calculations (id, config_id, status, sheet_version, next_row, end_row, result, created_at, completed_at) VALUES (?, ?, 'completed', ?, 2, 2, ?, ?, ?)`,
          crypto.randomUUID(),
          cfg.id,
          100 + i,
          JSON.stringify(result),
          i,
          i,
        );
      }
    });
    const history = async (q: string) => {
      const res = await call(`${s.base}/versions/score-history?${q}`, { key: s.ws.key });
      expect(res.status, q).toBe(200);
      return (await json(res)).score_history;
    };
    let h = await history("range=last_25");
    expect(h).toMatchObject({ total_points: 25, returned_points: 25, is_sampled: false, range: "last_25" });
    expect(h.points[0].sheet_version).toBe(196);
    h = await history("max_points=50");
    expect(h).toMatchObject({ total_points: 120, resolution: "min_max_bucket", is_sampled: true, max_points: 50 });
    expect(h.returned_points).toBeLessThanOrEqual(50);
    expect(h.points.map((p: any) => p.score)).toContain(0.9);
    expect(h.points.map((p: any) => p.score)).toContain(0);
    const versions = h.points.map((p: any) => p.sheet_version);
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    h = await history("max_points=50&resolution=raw");
    expect(h).toMatchObject({ returned_points: 50, resolution: "raw", is_sampled: true });
    expect(h.points[49].sheet_version).toBe(220);
    h = await history("range=last_100&max_points=100&resolution=min_max_bucket");
    expect(h).toMatchObject({ total_points: 100, returned_points: 100, resolution: "raw", is_sampled: false });
    expect((await history("max_points=5000")).returned_points).toBe(120);
    for (const q of ["max_points=49", "max_points=5001", "max_points=x", "range=last_10", "resolution=fine"]) {
      const res = await call(`${s.base}/versions/score-history?${q}`, { key: s.ws.key });
      expect(res.status, q).toBe(400);
      expect((await json(res)).message).toContain(q.split("=")[0]);
    }
  });
});
