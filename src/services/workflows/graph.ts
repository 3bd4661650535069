// Pure logic of workflow graphs: validation with messages that name the node, the execution plan
// (dependency levels), conditional edges, and PATCH's merge of node changes into a base version.
import { blockSources, validateBlockConfig } from "../../blocks";
import { asNumber, deepEqual, toText, tryParseJson } from "../../blocks/values";

export const MAX_NODES = 500;
export const MAX_EDGES = 1000;

export interface NodeSpec {
  name: string;
  node_type: string;
  is_output_node: boolean;
  configuration: Record<string, unknown>;
  dependencies: string[];
}

export const OPERATORS = ["=", "!=", "<", ">", "<=", ">=", "in", "not_in", "is_null", "is_not_null"] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Operand {
  source?: string | null;
  static_value?: unknown;
}

export interface ConditionalSpec {
  position: number;
  operator: Operator;
  left_config: Operand;
  right_config: Operand;
}

export interface EdgeSpec {
  source_node_name: string;
  target_node_name: string;
  is_and: boolean;
  conditionals: ConditionalSpec[];
}

export interface GraphIssue {
  field: string;
  rule: string;
}

export interface Plan {
  /** Nodes grouped so each group depends only on earlier groups (runs can run a group concurrently). */
  levels: string[][];
  /** What each node reads: its dependencies plus the inputs its configuration names. */
  inputsOf: Record<string, string[]>;
  /** Nodes (not input variables) each node waits for, edges included. */
  upstream: Record<string, string[]>;
  incomingEdges: Record<string, EdgeSpec[]>;
}

const nodeLabel = (i: number, n: NodeSpec) => `nodes[${i}] (${JSON.stringify(n.name)})`;

/** Checks a whole graph; returns the execution plan or every problem found (each naming its node). */
export function validateGraph(nodes: NodeSpec[], edges: EdgeSpec[], requiredInputs: Record<string, string>): { ok: true; plan: Plan } | { ok: false; issues: GraphIssue[] } {
  const issues: GraphIssue[] = [];
  const add = (field: string, rule: string) => issues.push({ field, rule });
  if (nodes.length === 0) add("nodes", "must have at least one node");
  if (nodes.length > MAX_NODES) add("nodes", `must have at most ${MAX_NODES} nodes`);
  if (edges.length > MAX_EDGES) add("edges", `must have at most ${MAX_EDGES} edges`);
  if (nodes.length > 0 && !nodes.some((n) => n.is_output_node)) add("nodes", "at least one node must have is_output_node = true");

  const names = new Set<string>();
  nodes.forEach((n, i) => {
    if (names.has(n.name)) add(`${nodeLabel(i, n)}.name`, "is used by another node; node names must be unique");
    names.add(n.name);
    if (Object.prototype.hasOwnProperty.call(requiredInputs, n.name)) add(`${nodeLabel(i, n)}.name`, "is also a required input variable; names must not collide");
  });
  const known = (x: string) => names.has(x) || Object.prototype.hasOwnProperty.call(requiredInputs, x);

  const inputsOf: Record<string, string[]> = {};
  const upstream: Record<string, Set<string>> = {};
  nodes.forEach((n, i) => {
    const label = nodeLabel(i, n);
    const check = validateBlockConfig(n.node_type, n.configuration);
    if (!check.ok) {
      if (check.reason === "invalid") for (const iss of check.issues) add(`${label}.configuration${iss.path ? `.${iss.path}` : ""}`, iss.message);
      else add(`${label}.node_type`, check.message);
    }
    n.dependencies.forEach((d, k) => {
      if (d === n.name) add(`${label}.dependencies[${k}]`, "a node cannot depend on itself");
      else if (!known(d)) add(`${label}.dependencies[${k}]`, `"${d}" is neither a node nor a required input variable`);
    });
    const sources = check.ok ? blockSources(n.node_type, n.configuration) : [];
    for (const s of sources) {
      if (s === n.name) add(`${label}.configuration`, "a node cannot read its own value");
      else if (!known(s)) add(`${label}.configuration`, `reads "${s}", which is neither a node nor a required input variable`);
    }
    inputsOf[n.name] = [...new Set([...n.dependencies, ...sources])].filter((x) => x !== n.name);
    upstream[n.name] = new Set(inputsOf[n.name].filter((x) => names.has(x)));
  });

  const incomingEdges: Record<string, EdgeSpec[]> = Object.fromEntries(nodes.map((n) => [n.name, []]));
  edges.forEach((e, i) => {
    const label = `edges[${i}]`;
    if (!names.has(e.source_node_name)) add(`${label}.source_node_name`, `"${e.source_node_name}" is not a node of this workflow`);
    if (!names.has(e.target_node_name)) add(`${label}.target_node_name`, `"${e.target_node_name}" is not a node of this workflow`);
    if (e.source_node_name === e.target_node_name) add(label, "an edge cannot join a node to itself");
    e.conditionals.forEach((c, k) => {
      for (const side of ["left_config", "right_config"] as const) {
        const op = c[side];
        const needsValue = side === "left_config" || (c.operator !== "is_null" && c.operator !== "is_not_null");
        const hasSource = op.source != null, hasStatic = op.static_value !== undefined;
        if (hasSource && hasStatic) add(`${label}.conditionals[${k}].${side}`, "give either source or static_value, not both");
        else if (needsValue && !hasSource && !hasStatic) add(`${label}.conditionals[${k}].${side}`, "needs source or static_value");
        if (hasSource && !known(op.source as string)) add(`${label}.conditionals[${k}].${side}.source`, `"${op.source}" is neither a node nor a required input variable`);
      }
    });
    if (names.has(e.source_node_name) && names.has(e.target_node_name)) {
      upstream[e.target_node_name].add(e.source_node_name);
      incomingEdges[e.target_node_name].push(e);
      for (const c of e.conditionals) for (const op of [c.left_config, c.right_config]) if (op.source && names.has(op.source) && op.source !== e.target_node_name) upstream[e.target_node_name].add(op.source);
    }
  });
  if (issues.length > 0) return { ok: false, issues };

  // Kahn's algorithm by levels; what is left over sits on a cycle.
  const remaining = new Map(nodes.map((n) => [n.name, new Set(upstream[n.name])]));
  const levels: string[][] = [];
  while (remaining.size > 0) {
    const ready = [...remaining].filter(([, deps]) => deps.size === 0).map(([name]) => name);
    if (ready.length === 0) {
      const cycle = [...remaining.keys()].sort();
      return { ok: false, issues: [{ field: "nodes", rule: `the graph has a cycle among ${cycle.map((c) => JSON.stringify(c)).join(", ")}` }] };
    }
    for (const r of ready) remaining.delete(r);
    for (const deps of remaining.values()) for (const r of ready) deps.delete(r);
    levels.push(ready);
  }
  return { ok: true, plan: { levels, inputsOf, upstream: Object.fromEntries(Object.entries(upstream).map(([k, v]) => [k, [...v]])), incomingEdges } };
}

function operandValue(op: Operand, values: Record<string, unknown>): unknown {
  return op.source != null ? values[op.source] : op.static_value;
}

function compare(a: unknown, b: unknown): number | undefined {
  const x = asNumber(a), y = asNumber(b);
  if (x !== undefined && y !== undefined && typeof a !== "boolean" && typeof b !== "boolean") return x - y;
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

function equal(a: unknown, b: unknown): boolean {
  const c = compare(a, b);
  if (c !== undefined) return c === 0;
  if (a !== null && typeof a === "object") return deepEqual(a, b);
  return toText(a) === toText(b);
}

function members(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (typeof v === "string" && v.trim().startsWith("[")) {
    const p = tryParseJson(v.trim());
    if (p.ok && Array.isArray(p.value)) return p.value;
  }
  return undefined;
}

/** One conditional: numbers compare as numbers, strings as strings; "in" reads a list (or a substring of text). */
export function evaluateConditional(c: ConditionalSpec, values: Record<string, unknown>): boolean {
  const left = operandValue(c.left_config, values);
  const right = operandValue(c.right_config, values);
  switch (c.operator) {
    case "is_null":
      return left === null || left === undefined;
    case "is_not_null":
      return left !== null && left !== undefined;
    case "=":
      return equal(left, right);
    case "!=":
      return !equal(left, right);
    case "in":
    case "not_in": {
      const list = members(right);
      const found = list ? list.some((m) => equal(left, m)) : toText(right).includes(toText(left));
      return c.operator === "in" ? found : !found;
    }
    default: {
      const d = compare(left, right);
      if (d === undefined) return false;
      return c.operator === "<" ? d < 0 : c.operator === ">" ? d > 0 : c.operator === "<=" ? d <= 0 : d >= 0;
    }
  }
}

export function edgePasses(e: EdgeSpec, values: Record<string, unknown>): boolean {
  const results = [...e.conditionals].sort((a, b) => a.position - b.position).map((c) => evaluateConditional(c, values));
  return e.is_and ? results.every(Boolean) : results.some(Boolean);
}

/** RFC 7396 merge: objects merge key by key, null removes a key, anything else replaces. */
export function mergeConfig(base: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = base !== null && typeof base === "object" && !Array.isArray(base) ? { ...(base as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergeConfig(out[k], v);
  }
  return out;
}

export interface NodeChange {
  node_type?: string | null;
  configuration?: Record<string, unknown> | null;
  dependencies?: string[] | null;
  is_output_node?: boolean | null;
}

/**
 * PATCH's rules: a change merges into the base node (configuration deep-merged, dependencies and the
 * rest replaced); null deletes a node; a new node needs node_type. Edges that touch a removed node go.
 */
export function applyNodeChanges(base: NodeSpec[], baseEdges: EdgeSpec[], changes: Record<string, NodeChange | null>): { ok: true; nodes: NodeSpec[]; edges: EdgeSpec[] } | { ok: false; issues: GraphIssue[] } {
  const issues: GraphIssue[] = [];
  const nodes = base.map((n) => ({ ...n }));
  const removed = new Set<string>();
  for (const [name, change] of Object.entries(changes)) {
    const at = nodes.findIndex((n) => n.name === name);
    if (change === null) {
      if (at === -1) issues.push({ field: `nodes.${name}`, rule: "is not a node of the base version, so it cannot be removed" });
      else {
        nodes.splice(at, 1);
        removed.add(name);
      }
      continue;
    }
    if (at === -1) {
      if (!change.node_type) {
        issues.push({ field: `nodes.${name}.node_type`, rule: "is required for a new node" });
        continue;
      }
      nodes.push({ name, node_type: change.node_type, is_output_node: change.is_output_node ?? false, configuration: change.configuration ?? {}, dependencies: change.dependencies ?? [] });
      continue;
    }
    const cur = nodes[at];
    nodes[at] = {
      name,
      node_type: change.node_type ?? cur.node_type,
      is_output_node: change.is_output_node ?? cur.is_output_node,
      configuration: change.configuration != null ? (mergeConfig(cur.configuration, change.configuration) as Record<string, unknown>) : cur.configuration,
      dependencies: change.dependencies ?? cur.dependencies,
    };
  }
  if (issues.length > 0) return { ok: false, issues };
  const edges = baseEdges.filter((e) => !removed.has(e.source_node_name) && !removed.has(e.target_node_name));
  return { ok: true, nodes, edges };
}
