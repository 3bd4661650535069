// After a restore replaced the sheet's columns, which columns' prompt references D1 must be told about.
import { describe, expect, it } from "vitest";
import { promptRefChanges } from "../../src/sheets/versions";
import type { ModelColumn } from "../../src/sheets/types";

const col = (id: string, type: string, config: Record<string, unknown>): ModelColumn => ({ seq: 0, id, title: id, type, config, computed: type !== "TEXT", upstream: [] });

describe("promptRefChanges", () => {
  it("clears the columns gone that had references, and sets every restored column that has or had them", () => {
    const before = [col("gone", "LLM_CALL", { prompt_id: 7 }), col("plain", "TEXT", {}), col("kept", "LLM_CALL", { prompt_id: 8 }), col("goneplain", "TEXT", {})];
    const after = [col("kept", "LLM_CALL", {}), col("new", "LLM_CALL", { template: { prompt_id: 9 } }), col("plain", "TEXT", {})];
    expect(promptRefChanges(before, after)).toEqual([
      { id: "gone", type: "TEXT", config: {} },
      { id: "kept", type: "LLM_CALL", config: {} },
      { id: "new", type: "LLM_CALL", config: { template: { prompt_id: 9 } } },
    ]);
  });

  it("is empty when no column had or has a reference", () => {
    expect(promptRefChanges([col("a", "TEXT", {})], [col("b", "TEXT", {})])).toEqual([]);
  });
});
