// The log store's door over periods (src/logs/periods.ts), on stand-in database handles: which
// database holds an id, the periods read again once for an id of an unknown range, ids grouped by
// database in their order.
import { describe, expect, it } from "vitest";
import type { Db } from "../../src/db/client";
import { ID_RANGE_SIZE } from "../../src/logs/id-ranges";
import { WorkspaceLogs, type LogPeriod } from "../../src/logs/periods";

const handle = (name: string) => ({ name }) as unknown as Db;
const [dbA, dbB, dbC] = [handle("A"), handle("B"), handle("C")];
const period = (shard: string, db: Db, range: number): LogPeriod => ({ shard, db, range });
const id = (range: number, n: number) => range * ID_RANGE_SIZE + n;

describe("WorkspaceLogs", () => {
  it("names the database of an id by its range; an id from before ranges is the first period's", async () => {
    const logs = new WorkspaceLogs(1, [period("DB", dbA, 3), period("LOGS_0", dbB, 1)]);
    expect(logs.current).toBe(dbB);
    expect(logs.periods.map((p) => p.shard)).toEqual(["LOGS_0", "DB"]);
    expect(logs.spread).toBe(true);
    expect(await logs.holding(id(3, 7))).toBe(dbA);
    expect(await logs.holding(id(1, 7))).toBe(dbB);
    expect(await logs.holding(42)).toBe(dbA);
    expect(await logs.holding(id(2, 7))).toBeNull();
  });

  it("reads the periods again once for an unknown range, however many such ids come", async () => {
    let reads = 0;
    const logs = new WorkspaceLogs(1, [period("LOGS_0", dbA, 1)], async () => {
      reads++;
      return [period("LOGS_0", dbA, 1), period("LOGS_1", dbB, 2)];
    });
    expect(logs.spread).toBe(false);
    const [a, b] = await Promise.all([logs.holding(id(2, 1)), logs.holding(id(2, 2))]);
    expect([a, b]).toEqual([dbB, dbB]);
    expect(logs.current).toBe(dbB);
    expect(await logs.holding(id(9, 1))).toBeNull();
    expect(await logs.holding(id(8, 1))).toBeNull();
    expect(reads).toBe(1);
  });

  it("groups ids by database in their order, dropping those no period holds; a database listed twice counts once, at its latest place", async () => {
    const logs = new WorkspaceLogs(1, [period("LOGS_0", dbA, 1), period("LOGS_1", dbB, 2), period("LOGS_0", dbA, 1), period("LOGS_2", dbC, 3)]);
    expect(logs.periods.map((p) => p.shard)).toEqual(["LOGS_2", "LOGS_0", "LOGS_1"]);
    const grouped = await logs.byDatabase([id(2, 1), id(1, 5), id(5, 1), id(2, 3), 9, id(3, 1)]);
    expect([...grouped]).toEqual([
      [dbB, [id(2, 1), id(2, 3)]],
      [dbA, [id(1, 5), 9]],
      [dbC, [id(3, 1)]],
    ]);
    expect(await WorkspaceLogs.single(1, dbC).holding(id(7, 1))).toBe(dbC);
  });
});
