// Column models built by hand, for the unit tests of the sheet's pure parts (no object, no storage).
import { ColumnGraph } from "../../src/sheets/stale-graph";
import type { ModelColumn, SheetModel } from "../../src/sheets/types";

export function model(columns: ModelColumn[], sourceReaders: SheetModel["sourceReaders"] = []): SheetModel {
  return {
    list: columns,
    bySeq: new Map(columns.map((c) => [c.seq, c])),
    byId: new Map(columns.map((c) => [c.id, c])),
    graph: new ColumnGraph(columns.map((c) => ({ seq: c.seq, upstream: c.upstream, computed: c.computed }))),
    sourceReaders,
  };
}

export const text = (seq: number, title: string): ModelColumn => ({ seq, id: `c${seq}`, title, type: "TEXT", config: {}, computed: false, upstream: [] });

/** A COMBINE_COLUMNS column reading `reads` by title. */
export const combine = (seq: number, title: string, reads: ModelColumn[]): ModelColumn => ({
  seq,
  id: `c${seq}`,
  title,
  type: "COMBINE_COLUMNS",
  config: { sources: reads.map((r) => r.title) },
  computed: true,
  upstream: reads.map((r) => r.seq),
});
