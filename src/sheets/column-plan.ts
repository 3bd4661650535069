// Column planning: the column model the engine works from (columns, their graph, who reads whom by
// title), and the checks a new or changed column passes before anything is stored: its type and
// config against the blocks' schemas, its dependencies against this sheet's columns, no cycle.
import { blockSources, COMPUTING_BLOCK_TYPES, validateBlockConfig } from "../blocks";
import { utf8Bytes } from "./cell-values";
import { columnRows, findColumnByRef } from "./columns";
import { ColumnGraph } from "./stale-graph";
import type { SheetStore } from "./storage";
import {
  fail,
  MAX_CONFIG_BYTES,
  SOURCE_EDGE,
  type DependencyInput,
  type Fail,
  type ModelColumn,
  type PlannedEdge,
  type SheetModel,
  type UpdateColumnInput,
} from "./types";

/** The column model: every column with its parsed config and upstream columns, and the column graph. */
export function buildModel(store: SheetStore): SheetModel {
  const cols = columnRows(store);
  const edges = store.sql
    .exec<{ column_seq: number; depends_on_seq: number; reference_type: string; config_key: string | null }>(
      `SELECT column_seq, depends_on_seq, reference_type, config_key FROM column_dependencies`,
    )
    .toArray();
  const list: ModelColumn[] = cols.map((c) => {
    const own = edges.filter((e) => e.column_seq === c.seq);
    return {
      seq: c.seq,
      id: c.id,
      title: c.title,
      type: c.type,
      config: JSON.parse(c.config) as Record<string, unknown>,
      computed: c.type !== "TEXT",
      upstream: [...new Set(own.map((e) => e.depends_on_seq))],
    };
  });
  const bySeq = new Map(list.map((c) => [c.seq, c]));
  const graph = new ColumnGraph(list.map((c) => ({ seq: c.seq, computed: c.computed, upstream: c.upstream.filter((u) => bySeq.has(u)) })));
  return { list, bySeq, byId: new Map(list.map((c) => [c.id, c])), graph, sourceReaders: edges.filter((e) => e.reference_type === SOURCE_EDGE) };
}

/** A dependency given by column id or, as PromptLayer's SDK sends it, by title. */
export function resolveColumn(m: SheetModel, ref: string): ModelColumn | undefined {
  return m.byId.get(ref.toLowerCase()) ?? findColumnByRef(m.list, ref);
}

export type ColumnPlan = { config: Record<string, unknown>; edges: PlannedEdge[] };

/**
 * Checks a column's type, config and dependencies against the blocks and this sheet's columns.
 * Returns the normalized config (defaults applied) and the edges to store, or the 400 to answer.
 */
export function planColumn(
  m: SheetModel,
  input: { type: string; config?: Record<string, unknown> | null; dependencies?: DependencyInput[] | null },
): ({ ok: true } & ColumnPlan) | Fail {
  const deps = input.dependencies ?? [];
  // Every column's config is held in memory by each call that reads the column graph.
  const configBytes = utf8Bytes(JSON.stringify(input.config ?? {}));
  if (configBytes > MAX_CONFIG_BYTES) return fail("payload_too_large", `config: takes ${configBytes} bytes; a column's config holds at most ${MAX_CONFIG_BYTES}`);
  if (input.type === "TEXT") {
    if (deps.length > 0) return fail("validation_error", "dependencies: a TEXT column reads no other column; its cells are edited");
    return { ok: true, config: input.config ?? {}, edges: [] };
  }
  const check = validateBlockConfig(input.type, input.config ?? {});
  if (!check.ok) {
    if (check.reason === "unknown_type") return fail("validation_error", `type: "${input.type}" is not a column type; use TEXT or one of ${COMPUTING_BLOCK_TYPES.join(", ")}`);
    if (check.reason === "unsupported") return fail("validation_error", `type: ${check.message}`);
    return fail("validation_error", check.issues.map((i) => `config${i.path ? `.${i.path}` : ""}: ${i.message}`).join("; "));
  }
  const edges: PlannedEdge[] = [];
  for (let i = 0; i < deps.length; i++) {
    const d = deps[i];
    const ref = typeof d === "string" ? d : d.column_id;
    const col = resolveColumn(m, ref);
    if (!col) return fail("validation_error", `dependencies[${i}]: no column with id or title ${JSON.stringify(ref)} in this sheet`);
    edges.push({ seq: col.seq, referenceType: typeof d === "string" ? "value" : (d.reference_type ?? "value"), configKey: typeof d === "string" ? null : (d.config_key ?? null) });
  }
  for (const name of blockSources(input.type, check.config)) {
    const col = m.list.find((c) => c.title === name);
    if (!col) return fail("validation_error", `config: reads ${JSON.stringify(name)}, which is not the title of a column of this sheet`);
    edges.push({ seq: col.seq, referenceType: SOURCE_EDGE, configKey: name });
  }
  return { ok: true, config: check.config, edges };
}

export function cycleMessage(m: SheetModel, cycle: number[]): string {
  const names = cycle.map((s) => JSON.stringify(m.bySeq.get(s)?.title ?? "this column"));
  return `dependencies: would create a cycle: ${[...names, names[0]].join(" reads ")}`;
}

/** Replaces a column's edges in the column graph (in the caller's transaction). */
export function storeEdges(store: SheetStore, seq: number, edges: PlannedEdge[]): void {
  store.sql.exec(`DELETE FROM column_dependencies WHERE column_seq = ?`, seq);
  for (const e of edges) {
    store.sql.exec(
      `INSERT OR IGNORE INTO column_dependencies (column_seq, depends_on_seq, reference_type, config_key) VALUES (?, ?, ?, ?)`,
      seq,
      e.seq,
      e.referenceType,
      e.configKey,
    );
  }
}

/** A column's dependencies as the API takes them (by column id), its config sources left out. */
function currentDependencies(store: SheetStore, m: SheetModel, col: ModelColumn): DependencyInput[] {
  return store.sql
    .exec<{ depends_on_seq: number; reference_type: string; config_key: string | null }>(
      `SELECT depends_on_seq, reference_type, config_key FROM column_dependencies WHERE column_seq = ? AND reference_type <> ?`,
      col.seq,
      SOURCE_EDGE,
    )
    .toArray()
    .filter((d) => m.bySeq.has(d.depends_on_seq))
    .map((d) => ({ column_id: m.bySeq.get(d.depends_on_seq)!.id, reference_type: d.reference_type, config_key: d.config_key }));
}

/**
 * The checks of Update Column: the type is kept, a new title clashes with no other column and is not
 * read by title in another column's config, and a new config or dependencies plan without a cycle.
 * Answers the plan to store (null when neither config nor dependencies change) or the error.
 */
export function planColumnUpdate(store: SheetStore, m: SheetModel, col: ModelColumn, patch: UpdateColumnInput): { ok: true; plan: ColumnPlan | null } | Fail {
  if (patch.type != null && patch.type !== col.type) return fail("validation_error", "type: cannot be changed; create a new column of the other type");
  if (patch.title != null && patch.title !== col.title) {
    const clash = m.list.find((c) => c.seq !== col.seq && c.title.toLowerCase() === patch.title!.toLowerCase());
    if (clash) return fail("conflict", `title: another column of this sheet is titled ${JSON.stringify(clash.title)}`);
    const readers = m.sourceReaders.filter((e) => e.depends_on_seq === col.seq && e.column_seq !== col.seq).map((e) => m.bySeq.get(e.column_seq)?.title);
    if (readers.length > 0) {
      return fail(
        "validation_error",
        `title: ${[...new Set(readers)].map((t) => JSON.stringify(t)).join(", ")} read this column by its title in their config; change their config first`,
      );
    }
  }
  if (patch.config === undefined && patch.dependencies === undefined) return { ok: true, plan: null };
  const p = planColumn(m, {
    type: col.type,
    config: patch.config === undefined ? col.config : patch.config,
    dependencies: patch.dependencies === undefined ? currentDependencies(store, m, col) : patch.dependencies,
  });
  if (!p.ok) return p;
  const cycle = m.graph.cycleIf(col.seq, p.edges.map((e) => e.seq));
  if (cycle) return fail("validation_error", cycleMessage(m, cycle));
  return { ok: true, plan: { config: p.config, edges: p.edges } };
}
