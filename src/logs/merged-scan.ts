// Several databases' ordered scans as one (a workspace over several log databases, periods.ts): rows
// handed out in key order, each once. A scan may be stopped by its request's bound before its end; it
// has then read every key up to its last one (its frontier) and holds nothing before it. So the rows
// of the other scans up to that frontier are still handed out in order, and past it the merge stops:
// a cursor resumes at the frontier, and nothing is skipped or given twice. Pure, unit-tested.

/** A row's position: a time (or other number) and an id that breaks ties. */
export interface ScanKey {
  start: number;
  id: string;
}

/** One database's scan: rows in key order; null when it ended or its bound stopped it (then `capped`, and `resume` is its frontier). */
export interface OrderedScan<R> {
  next(): Promise<R | null>;
  readonly capped: boolean;
  readonly resume: ScanKey | null;
}

/** Whether key `a` comes before key `b` in the order, or is `b` itself. */
export function notAfter(a: ScanKey, b: ScanKey, order: "asc" | "desc"): boolean {
  if (a.start !== b.start) return order === "desc" ? a.start > b.start : a.start < b.start;
  return order === "desc" ? a.id >= b.id : a.id <= b.id;
}

export class MergedScan<R> implements OrderedScan<R> {
  /** Each scan's next row: undefined not read yet, null none (the scan ended or was stopped). */
  private readonly heads: (R | null | undefined)[];
  private frontier: ScanKey | null = null;

  constructor(
    private readonly scans: OrderedScan<R>[],
    private readonly keyOf: (row: R) => ScanKey,
    private readonly order: "asc" | "desc",
  ) {
    this.heads = scans.map(() => undefined);
  }

  /** A scan's bound stopped the merge: more may follow `resume`. */
  get capped(): boolean {
    return this.frontier !== null;
  }

  get resume(): ScanKey | null {
    return this.frontier;
  }

  async next(): Promise<R | null> {
    if (this.frontier) return null;
    await Promise.all(
      this.scans.map(async (scan, i) => {
        if (this.heads[i] === undefined) this.heads[i] = await scan.next();
      }),
    );
    // The earliest frontier of a stopped scan: no row past it may be handed out yet.
    let stop: ScanKey | null = null;
    this.scans.forEach((scan, i) => {
      const at = this.heads[i] === null && scan.capped ? scan.resume : null;
      if (at && (!stop || notAfter(at, stop, this.order))) stop = at;
    });
    let best = -1;
    this.heads.forEach((row, i) => {
      if (row && (best < 0 || notAfter(this.keyOf(row), this.keyOf(this.heads[best]!), this.order))) best = i;
    });
    const row = best >= 0 ? this.heads[best]! : null;
    if (row && (!stop || notAfter(this.keyOf(row), stop, this.order))) {
      this.heads[best] = undefined;
      return row;
    }
    this.frontier = stop;
    return null;
  }
}
