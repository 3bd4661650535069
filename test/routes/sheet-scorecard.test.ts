// A sheet's scorecard: configuring steps (checked against the sheet's columns and the blocks),
// calculating on the alarm (step and row verdicts, aggregation, required steps, skipped and error
// rows, partial recalculation, reuse of unchanged steps, drift), row results, cancelling, deleting,
// migrating the sheet's score, every limit on both sides, every bad input a 4xx and isolation.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CHUNK_EVALUATIONS, MAX_STEPS, ROW_RESULT_CALCULATIONS, activeScorecard, queueScorecardCalculation, stepScorecard } from "../../src/sheets/scorecard";
import { SheetStore } from "../../src/sheets/storage";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, newSheet, patchCell, rows, type SheetRef } from "../helpers/sheet-data";

const stubOf = (s: SheetRef) => env.SHEETS.get(env.SHEETS.idFromName(s.sheetId));
const url = (s: SheetRef, path = "") => `${s.base}/scorecard${path}`;

function patch(s: SheetRef, body: unknown, key = s.ws.key) {
  return call(url(s), { method: "PATCH", key, json: body });
}

async function configured(s: SheetRef, body: unknown) {
  const res = await patch(s, body);
  const b = await json(res);
  if (res.status !== 200) throw new Error(`configure: ${res.status} ${JSON.stringify(b)}`);
  return b;
}

async function calculation(s: SheetRef, id: string) {
  const res = await call(url(s, `/calculations/${id}`), { key: s.ws.key });
  if (res.status !== 200) throw new Error(`calculation: ${res.status} ${await res.text()}`);
  return json(res);
}

/** Queues a calculation and waits for it to end. */
async function calculate(s: SheetRef, body?: unknown) {
  const res = await call(url(s, "/recalculate"), { method: "POST", key: s.ws.key, ...(body === undefined ? {} : { json: body }) });
  const b = await json(res);
  if (res.status !== 202) throw new Error(`recalculate: ${res.status} ${JSON.stringify(b)}`);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const c = await calculation(s, b.calculation_id);
    if (!["queued", "running"].includes(c.calculation.status)) return c.calculation;
    if (Date.now() > deadline) throw new Error("calculation still under way");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function sheetVersion(s: SheetRef) {
  return (await json(await call(s.base, { key: s.ws.key }))).sheet.version_count as number;
}

/** Column A "verdict" texts, B "answer" texts, rows 1..n (row 0 is the blank sheet's empty row). */
async function sheetWith(values: [string, string][]) {
  const ws = await createWorkspace();
  const s = await newSheet(ws);
  const B = (await addColumn(s, { title: "answer", type: "TEXT" })).column.id;
  await addRows(s, { count: values.length, values: values.map(([a, b]) => ({ [s.columnA]: a, [B]: b })) });
  return { s, B };
}

describe("configuring a scorecard", () => {
  it("has none at first", async () => {
    const { s } = await sheetWith([["true", "x"]]);
    const res = await call(url(s), { key: s.ws.key });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      success: true,
      scorecard: null,
      latest_calculation: null,
      display_calculation: null,
      criterion_summaries: null,
      drift_summary: null,
      progress: null,
    });
  });

  it("creates one (defaults applied, one new sheet version), then replaces its configuration keeping its id and the steps sent back with theirs", async () => {
    const { s, B } = await sheetWith([["true", "ok"]]);
    const before = await sheetVersion(s);
    const b = await configured(s, {
      name: "Quality",
      evaluated_column_ids: [B],
      aggregation: {},
      steps: [
        { title: "judged", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] },
        { title: "says ok", primitive_type: "CONTAINS", source_column_ids: [B], primitive_config: { value: "ok" }, weight: 2, required: true },
      ],
    });
    expect(b.version).toBe(before + 1);
    const sc = b.scorecard;
    expect(sc).toMatchObject({
      workspace_id: s.ws.workspaceId,
      smart_table_id: s.tableId,
      sheet_id: s.sheetId,
      name: "Quality",
      evaluated_column_ids: [B],
      aggregation: { method: "weighted_mean", required_step_failure_behavior: "fail", pass_threshold: 0.8, warn_threshold: 0.5 },
      status: "ready",
      stale_state: { is_stale: false, reasons: [] },
      latest_calculation_id: null,
      display_config: null,
    });
    expect(sc.steps).toMatchObject([
      { title: "judged", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA], weight: 1, required: false, thresholds: { pass: 0.5, warn: 0.5 }, order_index: 0, backing_column_id: null },
      { title: "says ok", primitive_type: "CONTAINS", source_column_ids: [B], weight: 2, required: true, primitive_config: { value: "ok" }, order_index: 1 },
    ]);
    const again = await configured(s, { name: "Quality 2", aggregation: { method: "min" }, steps: [{ ...sc.steps[1], title: "still ok" }] });
    expect(again.scorecard.id).toBe(sc.id);
    expect(again.scorecard.steps).toMatchObject([{ id: sc.steps[1].id, title: "still ok", order_index: 0, created_at: sc.steps[1].created_at }]);
    expect(again.scorecard.config_hash).not.toBe(sc.config_hash);
    const got = await json(await call(url(s), { key: s.ws.key }));
    expect(got.scorecard).toEqual(again.scorecard);
  });

  it("a scorecard without steps needs setup, and cannot be calculated", async () => {
    const { s } = await sheetWith([["true", "x"]]);
    const b = await configured(s, { name: "Empty", aggregation: {} });
    expect(b.scorecard.status).toBe("needs_setup");
    const res = await call(url(s, "/recalculate"), { method: "POST", key: s.ws.key });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^scorecard: has no steps/);
  });
});

describe("calculating a scorecard", () => {
  it("judges each row by its steps, combines them by weight, and sums up the calculation", async () => {
    const { s, B } = await sheetWith([
      ["true", "all ok"],
      ["false", "ok"],
      ["yes", "nope"],
      ["", "ok"],
    ]);
    const { scorecard } = await configured(s, {
      name: "Q",
      aggregation: { pass_threshold: 0.9, warn_threshold: 0.5 },
      steps: [
        { title: "judged", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] },
        { title: "says ok", primitive_type: "CONTAINS", source_column_ids: [B], primitive_config: { value: "OK" }, weight: 3 },
      ],
    });
    const [judged, saysOk] = scorecard.steps.map((x: any) => x.id);
    const calc = await calculate(s);
    expect(calc).toMatchObject({ status: "completed", scorecard_id: scorecard.id, sheet_id: s.sheetId, total_rows: 5, config_hash: scorecard.config_hash });
    expect(calc.sheet_revision).toBe(String(await sheetVersion(s)));
    // Row 0: judged skipped (empty), an empty text contains nothing → 0 fail. Row 1: 1·1 + 3·1 → 1 pass.
    // Row 2: (0 + 3)/4 = 0.75 warn. Row 3: (1 + 0)/4 = 0.25 fail. Row 4: judged skipped, 1 → pass.
    expect(calc.verdict_counts).toEqual({ pass: 2, warn: 1, fail: 2, error: 0, skipped: 0 });
    expect(calc.aggregate_score).toBeCloseTo((0 + 1 + 0.75 + 0.25 + 1) / 5);
    expect(calc.aggregate_verdict).toBe("warn");
    expect(calc.criterion_summaries[judged]).toMatchObject({ title: "judged", mean_score: 2 / 3, evaluated_rows: 3, verdict_counts: { pass: 2, fail: 1, skipped: 2 } });
    expect(calc.criterion_summaries[saysOk]).toMatchObject({ mean_score: 0.6, evaluated_rows: 5 });

    const list = await json(await call(url(s, "/rows"), { key: s.ws.key }));
    expect(list).toMatchObject({ success: true, calculation_id: calc.id, next_cursor: null, verdict_counts: calc.verdict_counts });
    expect(list.rows.map((r: any) => [r.row_index, r.aggregate_verdict])).toEqual([
      [0, "fail"],
      [1, "pass"],
      [2, "warn"],
      [3, "fail"],
      [4, "pass"],
    ]);
    expect(list.rows[2]).toEqual({ row_index: 2, aggregate_score: 0.75, aggregate_verdict: "warn", drift_summary: null, stale_state: { is_stale: false }, error_summary: null });
    const row = await json(await call(url(s, "/rows/3"), { key: s.ws.key }));
    expect(row).toMatchObject({ success: true, calculation_id: calc.id, scorecard_id: scorecard.id, sheet_id: s.sheetId, row_index: 3, aggregate_score: 0.25, aggregate_verdict: "fail" });
    expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(row.step_results[judged]).toMatchObject({ status: "completed", score: 1, verdict: "pass", value: true });
    expect(row.step_results[saysOk]).toMatchObject({ status: "completed", score: 0, verdict: "fail", value: false });
    expect(row.input_hash).toMatch(/^[0-9a-f]{32}$/);
    // Paging and a verdict filter.
    let page = await json(await call(url(s, "/rows?limit=2"), { key: s.ws.key }));
    expect(page.rows.map((r: any) => r.row_index)).toEqual([0, 1]);
    page = await json(await call(url(s, `/rows?limit=2&cursor=${page.next_cursor}`), { key: s.ws.key }));
    expect(page.rows.map((r: any) => r.row_index)).toEqual([2, 3]);
    page = await json(await call(url(s, `/rows?verdict=pass&calculation_id=${calc.id}`), { key: s.ws.key }));
    expect(page.rows.map((r: any) => r.row_index)).toEqual([1, 4]);

    const got = await json(await call(url(s), { key: s.ws.key }));
    expect(got.scorecard).toMatchObject({ status: "completed", latest_calculation_id: calc.id });
    expect(got.display_calculation.id).toBe(calc.id);
    expect(got.criterion_summaries).toEqual(calc.criterion_summaries);

    // An edit makes it stale; a second calculation has drift against the first.
    const cells = await rows(s);
    await patchCell(s, cells.data[3].cells[B].id, { display_value: "ok now" });
    expect((await json(await call(url(s), { key: s.ws.key }))).scorecard).toMatchObject({ status: "stale", stale_state: { is_stale: true, reasons: ["sheet_changed"] } });
    const second = await calculate(s);
    expect(second.drift_summary).toMatchObject({ previous_calculation_id: calc.id, previous_aggregate_score: calc.aggregate_score });
    expect(second.drift_summary.aggregate_score_delta).toBeCloseTo(0.75 / 5);
    const row3 = await json(await call(url(s, "/rows/3"), { key: s.ws.key }));
    expect(row3).toMatchObject({ aggregate_verdict: "pass", drift_summary: { previous_calculation_id: calc.id, previous_verdict: "fail", previous_score: 0.25, score_delta: 0.75 } });
    // The first calculation's rows are still there when named.
    expect((await json(await call(url(s, `/rows/3?calculation_id=${calc.id}`), { key: s.ws.key }))).aggregate_verdict).toBe("fail");
  });

  it("takes the step's columns by id or by title, in source_column_ids and in primitive_config (the Python SDK sends ids), and a step naming ids survives a rename", async () => {
    const { s, B } = await sheetWith([
      ["ok", "it is ok"],
      ["yes", "nope"],
    ]);
    // As the Python SDK's evaluate() builds it: source and value_source as column ids, and source_column_ids the same ids.
    const byId = { title: "answer has verdict", primitive_type: "CONTAINS", source_column_ids: [B, s.columnA], primitive_config: { source: B, value_source: s.columnA } };
    const byTitle = { title: "by title", primitive_type: "CONTAINS", source_column_ids: ["answer", "column a"], primitive_config: { source: "answer", value_source: "Column A" } };
    const { scorecard } = await configured(s, { name: "Refs", aggregation: {}, steps: [byId, byTitle] });
    // Stored as sent, with the columns resolved to ids.
    expect(scorecard.steps[0]).toMatchObject({ source_column_ids: [B, s.columnA], primitive_config: { source: B, value_source: s.columnA } });
    expect(scorecard.steps[1]).toMatchObject({ source_column_ids: [B, s.columnA], primitive_config: { value_source: "Column A" } });
    const calc = await calculate(s);
    const [idStep, titleStep] = scorecard.steps.map((x: any) => x.id);
    expect(calc.criterion_summaries[idStep]).toMatchObject({ verdict_counts: { pass: 2, fail: 1 } });
    expect(calc.criterion_summaries[titleStep]).toMatchObject({ verdict_counts: { pass: 2, fail: 1 } });
    const row1 = await json(await call(url(s, "/rows/1"), { key: s.ws.key }));
    expect(row1.step_results[idStep]).toMatchObject({ verdict: "pass", value: true });
    // Renaming the value column: the step that names it by id still reads it; the one naming its old title now errs.
    expect((await call(`${s.base}/columns/${s.columnA}`, { method: "PATCH", key: s.ws.key, json: { title: "Verdict" } })).status).toBe(200);
    const after = await calculate(s);
    expect(after.criterion_summaries[idStep]).toMatchObject({ verdict_counts: { pass: 2, fail: 1 } });
    expect(after.criterion_summaries[titleStep].verdict_counts, JSON.stringify(after.criterion_summaries[titleStep])).toMatchObject({ error: 3 });
    // A name that is neither an id nor a title of the step's columns is still a 400.
    const res = await patch(s, { name: "Refs", aggregation: {}, steps: [{ ...byId, primitive_config: { value_source: crypto.randomUUID() } }] });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^steps\[0\]\.primitive_config: reads "[0-9a-f-]{36}", which is not the id or title of one of the step's columns/);
  });

  it("runs the blocks' checks and the structure and tool-call checks", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const out = (await addColumn(s, { title: "out", type: "TEXT" })).column.id;
    const expected = (await addColumn(s, { title: "expected", type: "TEXT" })).column.id;
    const call1 = { tool_calls: [{ function: { name: "search", arguments: '{"q":"x"}' } }, { function: { name: "f", arguments: "not json" } }] };
    await addRows(s, {
      count: 2,
      values: [
        { [out]: '{"a":1,"b":2}', [expected]: '{"a":1,"b":2}' },
        { [out]: call1, [expected]: "nothing" },
      ],
    });
    const { scorecard } = await configured(s, {
      name: "checks",
      aggregation: {},
      steps: [
        { title: "valid json", primitive_type: "ASSERT_VALID", source_column_ids: [out], primitive_config: { type: "object" } },
        { title: "digits", primitive_type: "REGEX", source_column_ids: [out], primitive_config: { regex_pattern: "\\d" } },
        { title: "as expected", primitive_type: "COMPARE", source_column_ids: [out], target_column_id: expected, primitive_config: { comparison_type: { type: "JSON" } } },
        { title: "has a and b", primitive_type: "STRUCTURE", source_column_ids: [out], primitive_config: { required_keys: ["a", "b"] } },
        { title: "one call at most", primitive_type: "MAX_TOOL_CALLS", source_column_ids: [out], primitive_config: { max_tool_calls: 1 } },
        { title: "calls valid", primitive_type: "NO_INVALID_TOOL_CALLS", source_column_ids: [out] },
        { title: "judge", primitive_type: "LLM_ASSERTION", source_column_ids: [out], primitive_config: { prompt: "Is it fine? [[reply:true]]" }, evidence_mode: "hidden" },
      ],
    });
    await calculate(s);
    const ids = scorecard.steps.map((x: any) => x.id);
    const r1 = (await json(await call(url(s, "/rows/1"), { key: ws.key }))).step_results;
    const r2 = (await json(await call(url(s, "/rows/2"), { key: ws.key }))).step_results;
    const scores = (r: any) => ids.map((id: string) => r[id].score);
    expect(scores(r1)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    // The object against a text that is not JSON: the comparison cannot be made.
    expect(scores(r2)).toEqual([1, 0, null, 0, 0, 0, 1]);
    expect(r2[ids[2]]).toMatchObject({ status: "error", verdict: "error", error: expect.any(String) });
    expect(r2[ids[4]].value).toBe(2);
    expect(r2[ids[5]].value).toBe(1);
    // A hidden step keeps no value.
    expect(r2[ids[6]]).not.toHaveProperty("value");
    expect(r2[ids[0]].value).toBe(true);
  });

  it("a required step that fails makes the row fail, warn or error as configured", async () => {
    const { s, B } = await sheetWith([["true", "no"]]);
    for (const [behavior, verdict] of [
      ["fail", "fail"],
      ["warn", "warn"],
      ["error", "error"],
    ]) {
      await configured(s, {
        name: "R",
        aggregation: { method: "weighted_mean", required_step_failure_behavior: behavior, pass_threshold: 0.5 },
        steps: [
          { title: "judged", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA], weight: 9 },
          { title: "must say ok", primitive_type: "CONTAINS", source_column_ids: [B], primitive_config: { value: "ok" }, required: true },
        ],
      });
      await calculate(s);
      const row = await json(await call(url(s, "/rows/1"), { key: s.ws.key }));
      expect(row.aggregate_score, behavior).toBe(0.9);
      expect(row.aggregate_verdict, behavior).toBe(verdict);
    }
  });

  it("skips steps whose inputs are not computed, and errors those whose inputs failed", async () => {
    const { s } = await sheetWith([["12", "x"], ["abc", "y"]]);
    const gt = (await addColumn(s, { title: "big", type: "MATH_OPERATOR", config: { sources: ["Column A"], operator: "gt", value: 10 } })).column.id;
    await configured(s, { name: "S", aggregation: {}, steps: [{ title: "big", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [gt] }] });
    let calc = await calculate(s);
    expect(calc.verdict_counts).toMatchObject({ skipped: 3 });
    const r1 = await json(await call(url(s, "/rows/1"), { key: s.ws.key }));
    expect(Object.values(r1.step_results)).toEqual([expect.objectContaining({ status: "skipped", verdict: "skipped", error: 'input "big" is STALE' })]);
    expect(r1).toMatchObject({ aggregate_verdict: "skipped", aggregate_score: null });
    await call(`${s.base}/operations`, { method: "POST", key: s.ws.key, json: { column_ids: [gt] } });
    calc = await calculate(s);
    // Row 0 (empty) and row 2 ("abc") fail the block: their step errors; row 1 passes.
    expect(calc.verdict_counts).toMatchObject({ pass: 1, error: 2 });
    const r2 = await json(await call(url(s, "/rows/2"), { key: s.ws.key }));
    expect(r2).toMatchObject({ aggregate_verdict: "error", aggregate_score: null, error_summary: 'big: input "big" failed' });
  });

  it("recalculates only the rows and steps named, keeping the others' results", async () => {
    const { s, B } = await sheetWith([
      ["true", "ok"],
      ["true", "ok"],
    ]);
    const { scorecard } = await configured(s, {
      name: "P",
      aggregation: {},
      steps: [
        { title: "judged", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] },
        { title: "ok", primitive_type: "CONTAINS", source_column_ids: [B], primitive_config: { value: "ok" } },
      ],
    });
    await calculate(s);
    const page = await rows(s);
    await patchCell(s, page.data[1].cells[s.columnA].id, { display_value: "false" });
    await patchCell(s, page.data[2].cells[s.columnA].id, { display_value: "false" });
    await patchCell(s, page.data[2].cells[B].id, { display_value: "no" });
    const calc = await calculate(s, { row_indices: [2], step_ids: [scorecard.steps[0].id] });
    expect(calc).toMatchObject({ status: "completed", row_indices: [2], step_ids: [scorecard.steps[0].id], total_rows: 3 });
    const r1 = await json(await call(url(s, "/rows/1"), { key: s.ws.key }));
    const r2 = await json(await call(url(s, "/rows/2"), { key: s.ws.key }));
    // Row 1 carried over (still true); row 2: the named step sees false, the other keeps "ok".
    expect(r1.step_results[scorecard.steps[0].id].score).toBe(1);
    expect(r2.step_results[scorecard.steps[0].id].score).toBe(0);
    expect(r2.step_results[scorecard.steps[1].id].score).toBe(1);
  });

  it(`evaluates ${CHUNK_EVALUATIONS} steps in one alarm run and goes on in the next for one more`, async () => {
    for (const total of [CHUNK_EVALUATIONS, CHUNK_EVALUATIONS + 1]) {
      const ws = await createWorkspace();
      const s = await newSheet(ws);
      await runInDurableObject(stubOf(s), (_o, state) => {
        const sql = state.storage.sql;
        sql.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) INSERT INTO rows (row_index, created_at) SELECT i, 1 FROM n`, total);
        sql.exec(`INSERT INTO cells (row_index, column_seq, status, display_value, updated_at) SELECT row_index, 1, 'COMPLETED', 'true', 1 FROM rows`);
        sql.exec(`UPDATE sheet_meta SET value = ? WHERE key IN ('next_row_index', 'row_count')`, total);
      });
      await configured(s, { name: "C", aggregation: {}, steps: [{ title: "t", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] }] });
      const more = await runInDurableObject(stubOf(s), async (_o, state) => {
        const store = new SheetStore(state.storage);
        state.storage.transactionSync(() => queueScorecardCalculation(store, activeScorecard(store)!, { rows: null, steps: null }, Date.now()));
        const tx = <T,>(fn: () => T) => state.storage.transactionSync(fn);
        const first = await stepScorecard(store, {}, Date.now, tx);
        const second = first ? await stepScorecard(store, {}, Date.now, tx) : null;
        return [first, second];
      });
      expect(more, String(total)).toEqual(total === CHUNK_EVALUATIONS ? [false, null] : [true, false]);
      const got = await json(await call(url(s), { key: ws.key }));
      expect(got.display_calculation).toMatchObject({ total_rows: total, aggregate_score: 1 });
    }
  });

  it(`keeps row results for the latest ${ROW_RESULT_CALCULATIONS} calculations; older ones keep their summary`, async () => {
    const { s } = await sheetWith([["true", "x"]]);
    await configured(s, { name: "K", aggregation: {}, steps: [{ title: "t", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] }] });
    const ids: string[] = [];
    for (let i = 0; i <= ROW_RESULT_CALCULATIONS; i++) ids.push((await calculate(s)).id);
    const rowOf = (id: string) => call(url(s, `/rows/1?calculation_id=${id}`), { key: s.ws.key });
    expect((await rowOf(ids[0])).status).toBe(404);
    expect((await rowOf(ids[1])).status).toBe(200);
    expect((await calculation(s, ids[0])).calculation).toMatchObject({ status: "completed", aggregate_score: 1 });
    const list = await json(await call(url(s, `/rows?calculation_id=${ids[0]}`), { key: s.ws.key }));
    expect(list).toMatchObject({ calculation_id: ids[0], rows: [] });
  });
});

describe("cancelling, deleting and migrating", () => {
  it("cancels the calculation under way; nothing under way cancels nothing; a filter is a 400", async () => {
    const { s } = await sheetWith([["true", "x"]]);
    await configured(s, { name: "C", aggregation: {}, steps: [{ title: "t", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] }] });
    const id = await runInDurableObject(stubOf(s), (_o, state) => {
      const store = new SheetStore(state.storage);
      const q = state.storage.transactionSync(() => queueScorecardCalculation(store, activeScorecard(store)!, { rows: null, steps: null }, Date.now()));
      return (q as { id: string }).id;
    });
    let res = await call(url(s, "/cancel"), { method: "POST", key: s.ws.key, json: { row_indices: [1] } });
    expect(res.status).toBe(400);
    res = await call(url(s, "/cancel"), { method: "POST", key: s.ws.key });
    expect(res.status).toBe(200);
    const b = await json(res);
    expect(b).toMatchObject({ success: true, cancelled_count: 1, execution_ids: [id], calculation_id: id, scorecard: { id: expect.any(String) } });
    expect((await calculation(s, id)).calculation.status).toBe("cancelled");
    res = await call(url(s, "/cancel"), { method: "POST", key: s.ws.key, json: {} });
    expect(await json(res)).toMatchObject({ cancelled_count: 0, execution_ids: [], calculation_id: null });
  });

  it("deletes the scorecard (one new sheet version); then there is none to delete, calculate or cancel", async () => {
    const { s } = await sheetWith([["true", "x"]]);
    await configured(s, { name: "D", aggregation: {}, steps: [{ title: "t", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] }] });
    const before = await sheetVersion(s);
    let res = await call(url(s), { method: "DELETE", key: s.ws.key });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true });
    expect(await sheetVersion(s)).toBe(before + 1);
    expect((await json(await call(url(s), { key: s.ws.key }))).scorecard).toBeNull();
    res = await call(url(s), { method: "DELETE", key: s.ws.key });
    expect(res.status).toBe(404);
    expect((await call(url(s, "/recalculate"), { method: "POST", key: s.ws.key })).status).toBe(400);
    expect((await call(url(s, "/cancel"), { method: "POST", key: s.ws.key })).status).toBe(404);
    // A new one can be made.
    expect((await patch(s, { name: "again", aggregation: {} })).status).toBe(200);
  });

  it("migrates the sheet's score into COLUMN_AGGREGATE steps, and removes the score when asked", async () => {
    const { s, B } = await sheetWith([["true", "false"]]);
    const m = (body?: unknown) => call(url(s, "/migrate-legacy-score"), { method: "POST", key: s.ws.key, ...(body === undefined ? {} : { json: body }) });
    const before = await sheetVersion(s);
    let res = await m();
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      success: true,
      scorecard: null,
      converted_count: 0,
      skipped: [{ reason: expect.stringMatching(/no score configuration/), score_type: null }],
      legacy_score_deleted: false,
      version: before,
    });
    await call(`${s.base}/score`, { method: "PATCH", key: s.ws.key, json: { column_ids: [s.columnA, B], assertion_aggregation: "all", score_type: "boolean" } });
    res = await m({ delete_legacy_score: true });
    const b = await json(res);
    expect(b).toMatchObject({ converted_count: 2, skipped: [], legacy_score_deleted: true, scorecard: { name: "Score", aggregation: { method: "min" } } });
    expect(b.scorecard.steps).toMatchObject([
      { title: "Column A", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA], primitive_config: { score_type: "boolean" } },
      { title: "answer", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [B] },
    ]);
    expect(b.version).toBe(before + 2);
    expect((await json(await call(`${s.base}/score`, { key: s.ws.key }))).score_configuration).toBeNull();
    const calc = await calculate(s);
    expect(calc.verdict_counts).toMatchObject({ fail: 1, skipped: 1 });
    // Into an existing scorecard, steps are added.
    await call(`${s.base}/score`, { method: "PATCH", key: s.ws.key, json: { column_ids: [B] } });
    const again = await json(await m({}));
    expect(again).toMatchObject({ converted_count: 1, legacy_score_deleted: false });
    expect(again.scorecard.steps).toHaveLength(3);
    expect((await call(url(s, "/migrate-legacy-score"), { method: "POST", key: s.ws.key, json: { delete_legacy_score: "yes" } })).status).toBe(400);
  });
});

describe("refusals", () => {
  it("a 400 naming the field for every malformed configuration, nothing changed", async () => {
    const { s, B } = await sheetWith([["true", "x"]]);
    const step = { title: "t", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] };
    const before = await sheetVersion(s);
    for (const [body, message] of [
      [{ aggregation: {} }, /^name/],
      [{ name: "", aggregation: {} }, /^name/],
      [{ name: "x" }, /^aggregation/],
      [{ name: "x", aggregation: [] }, /^aggregation/],
      [{ name: "x", aggregation: { method: "median" } }, /^aggregation\.method/],
      [{ name: "x", aggregation: { pass_threshold: 2 } }, /^aggregation\.pass_threshold/],
      [{ name: "x", aggregation: { pass_threshold: 0.4, warn_threshold: 0.6 } }, /^aggregation\.warn_threshold/],
      [{ name: "x", aggregation: { required_step_failure_behavior: "panic" } }, /^aggregation\.required_step_failure_behavior/],
      [{ name: "x", aggregation: {}, evaluated_column_ids: [crypto.randomUUID()] }, /^evaluated_column_ids\[0\]: no column/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_type: "MAGIC" }] }, /^steps\[0\]\.primitive_type/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_type: "CODE_EXECUTION" }] }, /^steps\[0\]\.primitive_type: CODE_EXECUTION cannot run here/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_type: "TOOL_EVALUATOR" }] }, /^steps\[0\]\.primitive_type: TOOL_EVALUATOR cannot run here/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, source_column_ids: [] }] }, /^steps\[0\]\.source_column_ids: give the column/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, source_column_ids: [crypto.randomUUID()] }] }, /^steps\[0\]\.source_column_ids\[0\]: no column with this id or title/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, source_column_ids: ["no such title"] }] }, /^steps\[0\]\.source_column_ids\[0\]: no column with this id or title/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, source_column_ids: [""] }] }, /^steps\[0\]\.source_column_ids\[0\]: must not be empty/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, target_column_id: crypto.randomUUID() }] }, /^steps\[0\]\.target_column_id: no column/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, title: "" }] }, /^steps\[0\]\.title/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, weight: -1 }] }, /^steps\[0\]\.weight/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, thresholds: { pass: 1.5 } }] }, /^steps\[0\]\.thresholds\.pass/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, thresholds: { great: 0.5 } }] }, /^steps\[0\]\.thresholds: takes pass and warn/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_config: { min: 5, max: 1 } }] }, /^steps\[0\]\.primitive_config: min and max/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_type: "REGEX", source_column_ids: [B] }] }, /^steps\[0\]\.primitive_config\.regex_pattern/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_type: "COMPARE", source_column_ids: [B] }] }, /^steps\[0\]\.source_column_ids: COMPARE compares two columns/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_type: "CONTAINS", source_column_ids: [B], primitive_config: { value_source: "elsewhere" } }] }, /^steps\[0\]\.primitive_config: reads "elsewhere"/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_type: "MAX_TOOL_CALLS" }] }, /^steps\[0\]\.primitive_config\.max_tool_calls/],
      [{ name: "x", aggregation: {}, steps: [{ ...step, primitive_type: "STRUCTURE", primitive_config: { required_keys: "a" } }] }, /^steps\[0\]\.primitive_config\.required_keys/],
      [{ name: "x", aggregation: {}, steps: Array.from({ length: MAX_STEPS + 1 }, () => step) }, /^steps: must have at most 20/],
      [{ name: "x", aggregation: {}, evaluated_column_ids: Array.from({ length: 101 }, () => s.columnA) }, /^evaluated_column_ids: must have at most 100/],
    ] as const) {
      const res = await patch(s, body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect((await json(res)).message, JSON.stringify(body).slice(0, 200)).toMatch(message);
    }
    expect(await sheetVersion(s)).toBe(before);
    expect((await json(await call(url(s), { key: s.ws.key }))).scorecard).toBeNull();
    expect((await patch(s, { name: "x", aggregation: {}, steps: Array.from({ length: MAX_STEPS }, () => step), evaluated_column_ids: Array.from({ length: 100 }, () => s.columnA) })).status).toBe(200);
    const big = { name: "x", aggregation: {}, steps: [{ ...step, primitive_config: { pad: "p".repeat(65_536) } }] };
    const res = await patch(s, big);
    expect(res.status).toBe(413);
    expect((await patch(s, { ...big, steps: [{ ...step, primitive_config: { pad: "p".repeat(65_000) } }] })).status).toBe(200);
  });

  it("a 400 for bad recalculation filters and row queries; a 404 for an unknown calculation or row result", async () => {
    const { s } = await sheetWith([["true", "x"]]);
    await configured(s, { name: "F", aggregation: {}, steps: [{ title: "t", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] }] });
    for (const [body, message] of [
      [{ step_ids: [crypto.randomUUID()] }, /^step_ids\[0\]: no step/],
      [{ row_indices: [99] }, /^row_indices\[0\]: the sheet has no row 99/],
      [{ row_indices: [-1] }, /^row_indices/],
      [{ row_indices: Array.from({ length: 10_001 }, (_, i) => i) }, /^row_indices: must have at most 10000/],
      [{ step_ids: ["x"] }, /^step_ids/],
    ] as const) {
      const res = await call(url(s, "/recalculate"), { method: "POST", key: s.ws.key, json: body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    const tenThousand = await call(url(s, "/recalculate"), { method: "POST", key: s.ws.key, json: { row_indices: Array.from({ length: 10_000 }, () => 1) } });
    expect(tenThousand.status).toBe(202);
    for (const q of ["limit=0", "limit=101", "verdict=great", "cursor=-1", "cursor=x", "calculation_id=nope"]) {
      const res = await call(url(s, `/rows?${q}`), { key: s.ws.key });
      expect(res.status, q).toBe(400);
      expect((await json(res)).message).toContain(q.split("=")[0]);
    }
    for (const q of ["limit=1", "limit=100"]) expect((await call(url(s, `/rows?${q}`), { key: s.ws.key })).status).toBe(200);
    expect((await call(url(s, `/rows?calculation_id=${crypto.randomUUID()}`), { key: s.ws.key })).status).toBe(404);
    expect((await call(url(s, "/rows/x"), { key: s.ws.key })).status).toBe(400);
    expect((await call(url(s, "/rows/-1"), { key: s.ws.key })).status).toBe(400);
    expect((await call(url(s, "/rows/4000"), { key: s.ws.key })).status).toBe(404);
    expect((await call(url(s, `/calculations/${crypto.randomUUID()}`), { key: s.ws.key })).status).toBe(404);
    expect((await call(url(s, "/calculations/nope"), { key: s.ws.key })).status).toBe(400);
  });

  it("another workspace's table, sheet or calculation is a 404 on every scorecard route; so is another sheet's calculation", async () => {
    const { s } = await sheetWith([["true", "x"]]);
    await configured(s, { name: "I", aggregation: {}, steps: [{ title: "t", primitive_type: "COLUMN_AGGREGATE", source_column_ids: [s.columnA] }] });
    const calc = await calculate(s);
    const other = await createWorkspace();
    const k = other.key;
    for (const [method, path, body] of [
      ["GET", "", undefined],
      ["PATCH", "", { name: "theirs", aggregation: {} }],
      ["DELETE", "", undefined],
      ["GET", "/rows", undefined],
      ["GET", "/rows/1", undefined],
      ["POST", "/recalculate", {}],
      ["POST", "/cancel", {}],
      ["GET", `/calculations/${calc.id}`, undefined],
      ["POST", "/migrate-legacy-score", {}],
    ] as const) {
      const res = await call(url(s, path), { method, key: k, ...(body === undefined ? {} : { json: body }) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const mine2 = await newSheet(s.ws);
    expect((await call(url(mine2, `/calculations/${calc.id}`), { key: s.ws.key })).status).toBe(404);
    expect((await call(url(mine2, `/rows?calculation_id=${calc.id}`), { key: s.ws.key })).status).toBe(404);
    expect((await json(await call(url(s), { key: s.ws.key }))).scorecard.name).toBe("I");
    expect((await call(s.base, { method: "DELETE", key: s.ws.key })).status).toBe(200);
    expect((await call(url(s), { key: s.ws.key })).status).toBe(404);
  });
});
