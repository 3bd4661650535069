// Column planning on its own: the checks a new or changed column passes before the sheet object
// stores anything (type and config against the blocks, dependencies against the sheet's columns,
// no cycle, titles other columns read).
import { describe, expect, it } from "vitest";
import { cycleMessage, planColumn, planColumnUpdate, resolveColumn } from "../../src/sheets/column-plan";
import type { SheetStore } from "../../src/sheets/storage";
import { MAX_CONFIG_BYTES, SOURCE_EDGE } from "../../src/sheets/types";
import { combine, model, text } from "./model";

// planColumnUpdate reads the stored dependencies only when the patch changes config but not dependencies.
const noStore = null as unknown as SheetStore;

describe("planColumn", () => {
  const a = text(1, "Question");
  const b = text(2, "Answer");
  const m = model([a, b]);

  it("takes a TEXT column as sent, and refuses dependencies for it", () => {
    expect(planColumn(m, { type: "TEXT", config: { note: 1 } })).toEqual({ ok: true, config: { note: 1 }, edges: [] });
    expect(planColumn(m, { type: "TEXT", dependencies: ["c1"] })).toMatchObject({ ok: false, code: "validation_error", message: expect.stringMatching(/^dependencies: a TEXT column/) });
  });

  it("checks a computing column's config and adds an edge for each column its config reads by title", () => {
    const p = planColumn(m, { type: "COMBINE_COLUMNS", config: { sources: ["Question", "Answer"] } });
    expect(p).toMatchObject({ ok: true, config: { sources: ["Question", "Answer"] } });
    expect(p.ok && p.edges).toEqual([
      { seq: 1, referenceType: SOURCE_EDGE, configKey: "Question" },
      { seq: 2, referenceType: SOURCE_EDGE, configKey: "Answer" },
    ]);
    expect(planColumn(m, { type: "COMBINE_COLUMNS", config: { sources: ["Nope"] } })).toMatchObject({ ok: false, message: expect.stringContaining('reads "Nope"') });
    expect(planColumn(m, { type: "COMBINE_COLUMNS", config: {} })).toMatchObject({ ok: false, code: "validation_error", message: expect.stringMatching(/^config\.sources: /) });
  });

  it("names unknown types, and takes dependencies by id (any case) or by title", () => {
    expect(planColumn(m, { type: "NOPE" })).toMatchObject({ ok: false, message: expect.stringMatching(/^type: "NOPE" is not a column type; use TEXT or one of /) });
    const p = planColumn(m, { type: "COMBINE_COLUMNS", config: { sources: ["Question"] }, dependencies: ["C2", { column_id: "Question", reference_type: "metadata", config_key: "k" }] });
    expect(p.ok && p.edges.slice(0, 2)).toEqual([
      { seq: 2, referenceType: "value", configKey: null },
      { seq: 1, referenceType: "metadata", configKey: "k" },
    ]);
    expect(planColumn(m, { type: "COMBINE_COLUMNS", config: { sources: ["Question"] }, dependencies: ["c1", "zz"] })).toMatchObject({
      ok: false,
      message: 'dependencies[1]: no column with id or title "zz" in this sheet',
    });
    expect(resolveColumn(m, "answer")?.seq).toBe(2);
  });

  it("refuses a config over MAX_CONFIG_BYTES as too large, and takes one at the limit", () => {
    const at = { note: "x".repeat(MAX_CONFIG_BYTES - JSON.stringify({ note: "" }).length) };
    expect(planColumn(m, { type: "TEXT", config: at }).ok).toBe(true);
    const over = { note: `${at.note}x` };
    expect(planColumn(m, { type: "TEXT", config: over })).toMatchObject({ ok: false, code: "payload_too_large" });
  });
});

describe("planColumnUpdate", () => {
  const a = text(1, "A");
  const b = combine(2, "B", [a]);
  const c = combine(3, "C", [b]);
  const m = model([a, b, c], [
    { column_seq: 2, depends_on_seq: 1 },
    { column_seq: 3, depends_on_seq: 2 },
  ]);

  it("plans nothing for a change of title, flag or rank alone", () => {
    expect(planColumnUpdate(noStore, m, c, { title: "C2", position_rank: 3 })).toEqual({ ok: true, plan: null });
  });

  it("refuses a change of type, a title another column has, and renaming a column read by title", () => {
    expect(planColumnUpdate(noStore, m, a, { type: "COMBINE_COLUMNS" })).toMatchObject({ ok: false, message: expect.stringMatching(/^type: cannot be changed/) });
    expect(planColumnUpdate(noStore, m, c, { title: "b" })).toMatchObject({ ok: false, code: "conflict", message: 'title: another column of this sheet is titled "B"' });
    expect(planColumnUpdate(noStore, m, a, { title: "A2" })).toMatchObject({ ok: false, message: expect.stringMatching(/^title: "B" read this column by its title/) });
  });

  it("refuses a configuration that would close a cycle, naming its columns", () => {
    const r = planColumnUpdate(noStore, m, b, { config: { sources: ["C"] }, dependencies: [] });
    expect(r).toEqual({ ok: false, code: "validation_error", message: 'dependencies: would create a cycle: "B" reads "C" reads "B"' });
    expect(cycleMessage(m, [2, 3])).toBe('dependencies: would create a cycle: "B" reads "C" reads "B"');
    const ok = planColumnUpdate(noStore, m, c, { config: { sources: ["A"] }, dependencies: [] });
    expect(ok).toMatchObject({ ok: true, plan: { config: { sources: ["A"] }, edges: [{ seq: 1, referenceType: SOURCE_EDGE, configKey: "A" }] } });
  });
});
