// The merge of several databases' ordered scans: every row once, in key order, and a stopped scan's
// frontier respected, so paging by `resume` from a bounded merge walks every row exactly once.
import { describe, expect, it } from "vitest";
import { MergedScan, notAfter, type OrderedScan, type ScanKey } from "../../src/logs/merged-scan";

type Row = ScanKey;

/** A scan over sorted rows past `after` that stops after `budget` rows, its frontier the last one read. */
function fakeScan(rows: Row[], order: "asc" | "desc", after: ScanKey | null, budget: number): OrderedScan<Row> {
  const past = rows.filter((r) => !after || !notAfter(r, after, order)).sort((a, b) => (notAfter(a, b, order) ? -1 : 1));
  let i = 0;
  let last: ScanKey | null = after;
  return {
    async next() {
      if (i >= past.length || i >= budget) return null;
      last = past[i];
      return past[i++];
    },
    get capped() {
      return i < past.length && i >= budget;
    },
    get resume() {
      return last;
    },
  };
}

const key = (start: number, id: string): Row => ({ start, id });

/** Pages through the merge from the start, `limit` rows a page, each scan read `budget` rows a page. */
async function walk(dbs: Row[][], order: "asc" | "desc", budget: number, limit: number): Promise<Row[]> {
  const seen: Row[] = [];
  let cursor: ScanKey | null = null;
  for (let page = 0; page < 1000; page++) {
    const merged = new MergedScan(dbs.map((rows) => fakeScan(rows, order, cursor, budget)), (r) => r, order);
    const got: Row[] = [];
    while (got.length < limit) {
      const row = await merged.next();
      if (!row) break;
      got.push(row);
    }
    seen.push(...got);
    if (got.length === limit) cursor = got[got.length - 1];
    else if (merged.capped) cursor = merged.resume;
    else return seen;
  }
  throw new Error("no end");
}

describe("MergedScan", () => {
  const dbs = [
    [key(1, "a"), key(4, "d"), key(5, "e"), key(9, "i")],
    [key(2, "b"), key(3, "c"), key(6, "f"), key(7, "g"), key(8, "h")],
    [key(5, "z")],
  ];
  const all = dbs.flat();
  const sorted = (order: "asc" | "desc") => [...all].sort((a, b) => (notAfter(a, b, order) ? -1 : 1));

  it("hands out every row once, in key order, ties broken by id", async () => {
    for (const order of ["asc", "desc"] as const) expect(await walk(dbs, order, 100, 100)).toEqual(sorted(order));
  });

  it("a scan stopped by its bound holds the merge at its frontier; resuming there skips and repeats nothing", async () => {
    for (const order of ["asc", "desc"] as const) {
      for (const budget of [1, 2, 3]) {
        for (const limit of [1, 2, 5]) expect(await walk(dbs, order, budget, limit), `${order} ${budget} ${limit}`).toEqual(sorted(order));
      }
    }
  });

  it("stops before a row past the frontier: the row waits for the next page", async () => {
    // Database 0 stopped after key 1; database 1's key 2 comes after that frontier.
    const merged = new MergedScan([fakeScan(dbs[0], "asc", null, 1), fakeScan(dbs[1], "asc", null, 10)], (r) => r, "asc");
    expect(await merged.next()).toEqual(key(1, "a"));
    expect(await merged.next()).toBeNull();
    expect(merged.capped).toBe(true);
    expect(merged.resume).toEqual(key(1, "a"));
  });
});
