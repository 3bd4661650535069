// The column graph of a sheet, as pure code: which columns a column reads (upstream), which read it
// (downstream), a dependency order to compute in, cycle detection, and the hash of a computed cell's
// inputs. The sheet object applies these to its cells; nothing here touches storage.

export interface GraphColumn {
  seq: number;
  /** TEXT columns are edited, never computed: they end a walk upstream. */
  computed: boolean;
  /** The columns this one reads directly. */
  upstream: readonly number[];
}

export class ColumnGraph {
  private readonly cols = new Map<number, GraphColumn>();
  private readonly readers = new Map<number, number[]>();
  private orderCache: number[] | null = null;

  constructor(columns: readonly GraphColumn[]) {
    for (const c of columns) {
      this.cols.set(c.seq, c);
      this.readers.set(c.seq, []);
    }
    for (const c of columns) {
      for (const u of new Set(c.upstream)) this.readers.get(u)?.push(c.seq);
    }
  }

  has(seq: number): boolean {
    return this.cols.has(seq);
  }

  column(seq: number): GraphColumn | undefined {
    return this.cols.get(seq);
  }

  /** Every column in an order where a column comes after all it reads (ties by seq). Assumes no cycle. */
  order(): number[] {
    if (this.orderCache) return this.orderCache;
    const indeg = new Map<number, number>();
    for (const c of this.cols.values()) indeg.set(c.seq, [...new Set(c.upstream)].filter((u) => this.cols.has(u)).length);
    const ready = [...indeg].filter(([, d]) => d === 0).map(([s]) => s).sort((a, b) => a - b);
    const out: number[] = [];
    while (ready.length > 0) {
      const s = ready.shift()!;
      out.push(s);
      for (const r of this.readers.get(s) ?? []) {
        const d = indeg.get(r)! - 1;
        indeg.set(r, d);
        if (d === 0) {
          // Keep `ready` sorted so the order is deterministic.
          const at = ready.findIndex((x) => x > r);
          ready.splice(at === -1 ? ready.length : at, 0, r);
        }
      }
    }
    this.orderCache = out;
    return out;
  }

  /** Columns grouped so each group reads only earlier groups: cells of one group can compute together. */
  levels(): number[][] {
    const level = new Map<number, number>();
    const out: number[][] = [];
    for (const s of this.order()) {
      const c = this.cols.get(s)!;
      const l = c.upstream.reduce((m, u) => (level.has(u) ? Math.max(m, level.get(u)! + 1) : m), 0);
      level.set(s, l);
      (out[l] ??= []).push(s);
    }
    return out;
  }

  /** Columns that read `seqs`, directly or not, in dependency order (the starting columns excluded). */
  downstream(seqs: Iterable<number>): number[] {
    const start = new Set(seqs);
    const seen = new Set<number>();
    const stack = [...start];
    while (stack.length > 0) {
      const s = stack.pop()!;
      for (const r of this.readers.get(s) ?? []) {
        if (!seen.has(r)) {
          seen.add(r);
          stack.push(r);
        }
      }
    }
    for (const s of start) seen.delete(s);
    return this.order().filter((s) => seen.has(s));
  }

  /** Columns `seq` reads, directly or not, in dependency order (`seq` excluded). */
  upstream(seq: number): number[] {
    const seen = new Set<number>();
    const stack = [seq];
    while (stack.length > 0) {
      const s = stack.pop()!;
      for (const u of this.cols.get(s)?.upstream ?? []) {
        if (!seen.has(u) && this.cols.has(u)) {
          seen.add(u);
          stack.push(u);
        }
      }
    }
    seen.delete(seq);
    return this.order().filter((s) => seen.has(s));
  }

  /**
   * The cycle that giving `seq` the upstream `newUpstream` would close, as a list of columns
   * (seq first, each reading the next, the last reading seq), or null when the graph stays acyclic.
   */
  cycleIf(seq: number, newUpstream: readonly number[]): number[] | null {
    for (const u of newUpstream) {
      if (u === seq) return [seq];
      const path = this.pathTo(u, seq);
      // u reads … reads seq: seq reading u would close the loop.
      if (path) return [seq, ...path.slice(0, -1)];
    }
    return null;
  }

  /** A path of readers from `from` to `to` along upstream edges (from reads … reads to), or null. */
  private pathTo(from: number, to: number): number[] | null {
    const prev = new Map<number, number>();
    const queue = [from];
    const seen = new Set([from]);
    while (queue.length > 0) {
      const s = queue.shift()!;
      if (s === to) {
        const path = [s];
        for (let p = prev.get(s); p !== undefined; p = prev.get(p)) path.push(p);
        return path.reverse();
      }
      for (const u of this.cols.get(s)?.upstream ?? []) {
        if (!seen.has(u)) {
          seen.add(u);
          prev.set(u, s);
          queue.push(u);
        }
      }
    }
    return null;
  }
}

/** JSON with object keys sorted, so equal values always serialize the same. */
export function stableJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  const keys = Object.keys(v as object).sort();
  return `{${keys
    .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
    .join(",")}}`;
}

/**
 * A 128-bit hash (hex) of what a computed cell is computed from: its column's type and config and
 * its input values. Synchronous (cyrb128), because it runs per cell inside a batch; it detects
 * change, it is not a security boundary.
 */
export function inputHash(type: string, config: unknown, inputs: Record<string, unknown>): string {
  const s = `${type}\u0000${stableJson(config)}\u0000${stableJson(inputs)}`;
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0; i < s.length; i++) {
    const k = s.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1, h2, h3, h4].map((h) => (h >>> 0).toString(16).padStart(8, "0")).join("");
}
