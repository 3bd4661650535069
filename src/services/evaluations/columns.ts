// The columns of an evaluation pipeline, checked as a whole (pure): each is a block of the shared
// engine (src/blocks), names are unique and do not shadow a dataset column, and a column reads only
// dataset columns and columns to its left, so one pass in position order evaluates a row.
import { blockSources, validateBlockConfig } from "../../blocks";

/** Columns per pipeline: each is evaluated once per dataset row (an LLM call per row for LLM blocks). */
export const MAX_COLUMNS = 50;

export interface ColumnSpec {
  column_type: string;
  name: string;
  configuration: Record<string, unknown>;
  is_part_of_score: boolean;
}

export interface ColumnIssue {
  field: string;
  rule: string;
}

/**
 * Orders columns for storage: a column with a (1-based) position goes there, the others keep their
 * relative order; positions are then renumbered 1..n.
 */
export function orderColumns<T extends { position?: number | null }>(columns: T[]): T[] {
  return columns
    .map((c, i) => ({ c, key: c.position ?? i + 1, i }))
    .sort((a, b) => a.key - b.key || (a.c.position == null ? 1 : 0) - (b.c.position == null ? 1 : 0) || a.i - b.i)
    .map((x) => x.c);
}

/** Every problem of a pipeline's columns (in order), each naming the column; [] when it can run. */
export function validateColumns(columns: ColumnSpec[], datasetColumns: readonly string[], label = (i: number, c: ColumnSpec) => `columns[${i}] (${JSON.stringify(c.name)})`): ColumnIssue[] {
  const issues: ColumnIssue[] = [];
  if (columns.length > MAX_COLUMNS) issues.push({ field: "columns", rule: `at most ${MAX_COLUMNS} columns` });
  const dataset = new Set(datasetColumns);
  const all = new Set(columns.map((c) => c.name));
  const left = new Set<string>();
  columns.forEach((c, i) => {
    const at = label(i, c);
    if (left.has(c.name)) issues.push({ field: `${at}.name`, rule: "is used by another column; names must be unique in the pipeline" });
    if (dataset.has(c.name)) issues.push({ field: `${at}.name`, rule: "is a column of the dataset; choose another name" });
    const check = validateBlockConfig(c.column_type, c.configuration);
    if (!check.ok) {
      if (check.reason === "invalid") for (const iss of check.issues) issues.push({ field: `${at}.configuration${iss.path ? `.${iss.path}` : ""}`, rule: iss.message });
      else issues.push({ field: `${at}.column_type`, rule: check.message });
    } else {
      for (const s of blockSources(c.column_type, c.configuration)) {
        if (s === c.name) issues.push({ field: `${at}.configuration`, rule: "a column cannot read its own value" });
        else if (dataset.has(s) || left.has(s)) continue;
        else if (all.has(s)) issues.push({ field: `${at}.configuration`, rule: `reads "${s}", a column to its right; a column reads dataset columns and columns before it` });
        else issues.push({ field: `${at}.configuration`, rule: `reads "${s}", which is neither a dataset column nor a column of the pipeline` });
      }
    }
    left.add(c.name);
  });
  return issues;
}

/** The inputs a column reads (for "dependency failed" decisions at run time). */
export function columnSources(c: Pick<ColumnSpec, "column_type" | "configuration">): string[] {
  return blockSources(c.column_type, c.configuration);
}
