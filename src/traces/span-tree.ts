// A trace's spans as one tree, the shape the SDKs read a "Trace" cell in (a sheet row made from a
// trace by add-trace): each span with its children, oldest first, its input and output taken from
// the SDKs' function_input / function_output attributes. Pure: spans in, a JSON value out.

export interface TreeSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string | number | null;
  startTime: number;
  endTime: number;
  statusCode: string | number | null;
  statusMessage: string | null;
  attributes: Record<string, unknown> | null;
  requestLogId: number | null;
}

export interface SpanNode {
  span_id: string;
  parent_id: string | null;
  name: string;
  kind: string | number | null;
  start: string;
  end: string;
  duration_ms: number;
  status: { code: string | number | null; message: string | null };
  input: unknown;
  output: unknown;
  attributes: Record<string, unknown>;
  request_log_id: number | null;
  children: SpanNode[];
}

const iso = (ms: number) => new Date(Math.floor(ms)).toISOString();

/**
 * The tree under `rootSpanId` (which must be one of `spans`), or of the whole trace: its one root, or
 * when several spans have no parent in the trace, a node named after the trace holding them all.
 * Every span of the trace is in it once.
 */
export function spanTree(traceId: string, spans: readonly TreeSpan[], rootSpanId: string | null = null): SpanNode {
  const ids = new Set(spans.map((s) => s.spanId));
  const byParent = new Map<string | null, TreeSpan[]>();
  for (const s of [...spans].sort((a, b) => a.startTime - b.startTime || a.spanId.localeCompare(b.spanId))) {
    const parent = s.parentSpanId && ids.has(s.parentSpanId) && s.parentSpanId !== s.spanId ? s.parentSpanId : null;
    byParent.set(parent, [...(byParent.get(parent) ?? []), s]);
  }
  // Each span is placed once, so a parent cycle in the data cannot recurse forever.
  const placed = new Set<string>();
  const node = (s: TreeSpan): SpanNode => {
    placed.add(s.spanId);
    const attributes = s.attributes ?? {};
    return {
      span_id: s.spanId,
      parent_id: s.parentSpanId,
      name: s.name,
      kind: s.kind,
      start: iso(s.startTime),
      end: iso(s.endTime),
      duration_ms: Math.max(0, s.endTime - s.startTime),
      status: { code: s.statusCode, message: s.statusMessage },
      input: attributes.function_input ?? null,
      output: attributes.function_output ?? null,
      attributes,
      request_log_id: s.requestLogId,
      children: (byParent.get(s.spanId) ?? []).filter((c) => !placed.has(c.spanId)).map(node),
    };
  };
  if (rootSpanId !== null) {
    const root = spans.find((s) => s.spanId === rootSpanId);
    if (!root) throw new Error(`span ${rootSpanId} is not in the trace`);
    return node(root);
  }
  const children = (byParent.get(null) ?? []).map(node);
  // Spans whose parents form a cycle are reached from no root: each joins the top level.
  for (const s of spans) if (!placed.has(s.spanId)) children.push(node(s));
  if (children.length === 1) return children[0];
  const start = Math.min(...spans.map((s) => s.startTime));
  const end = Math.max(...spans.map((s) => s.endTime));
  return {
    span_id: "",
    parent_id: null,
    name: `trace ${traceId}`,
    kind: null,
    start: iso(start),
    end: iso(end),
    duration_ms: Math.max(0, end - start),
    status: { code: null, message: null },
    input: null,
    output: null,
    attributes: {},
    request_log_id: null,
    children,
  };
}

/** The request log ids in a tree, oldest span first. */
export function treeRequestLogIds(tree: SpanNode): number[] {
  const out: number[] = [];
  const walk = (n: SpanNode) => {
    if (n.request_log_id !== null && !out.includes(n.request_log_id)) out.push(n.request_log_id);
    n.children.forEach(walk);
  };
  walk(tree);
  return out;
}
