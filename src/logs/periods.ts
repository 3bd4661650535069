// A workspace's logs across its periods: the log store's one door (deps.logs(ws) hands one out).
// A workspace writes into one log database at a time; when that database fills, its new logs go to
// another (a new period) and nothing moves (shards.ts). So its logs, groups and spans live in one or
// more databases: new ones in the current period's, an id in the database whose range holds it
// (id-ranges.ts), and every read that is not by id fans out over all of them and merges. The store's
// functions take this object; their callers hand it on without looking inside.
import type { Db } from "../db/client";
import { idRangeOf } from "./id-ranges";
import type { IndexExtension } from "./index-extension";

/** One database of a workspace: the binding it is known by, its handle, its id range. */
export interface LogPeriod {
  shard: string;
  db: Db;
  range: number;
}

export class WorkspaceLogs {
  private list: LogPeriod[];
  /** The first period's database: it holds the ids given before ranges existed. */
  private first: Db;
  /** Set by single(): the one database is asked for any id. */
  private anyId = false;
  /** What the request adds to indexing (Signals), for the indexing a snapshot does itself (indexBeforeSnapshot). */
  indexExtension?: IndexExtension;
  /** The periods read again (at most once per request: after that an unknown range is another workspace's). */
  private reloading: Promise<void> | null = null;
  /** The control database, where the workspace's signals are defined (their names: signal-names.ts). */
  readonly control: Db;

  /**
   * `periods` oldest first, the current one last (a database listed twice counts once, at its latest
   * place). `reload` reads them again, for an id of a period opened since they were read. `control`:
   * the control database (a store made without one, in a test, takes its first period's).
   */
  constructor(
    readonly workspaceId: number,
    periods: readonly LogPeriod[],
    private readonly reload?: () => Promise<LogPeriod[]>,
    control?: Db,
  ) {
    if (periods.length === 0) throw new Error(`workspace ${workspaceId} has no log database`);
    this.list = distinct(periods);
    this.first = periods[0].db;
    this.control = control ?? this.first;
  }

  /** One database taken to hold every id of the workspace (its range unknown): what a test or a tool hands the store. */
  static single(workspaceId: number, db: Db): WorkspaceLogs {
    const logs = new WorkspaceLogs(workspaceId, [{ shard: "", db, range: -1 }]);
    logs.anyId = true;
    return logs;
  }

  /** Where new logs, groups and spans go: the current period's database. */
  get current(): Db {
    return this.list[this.list.length - 1].db;
  }

  /** Each database once, newest period first. */
  get periods(): readonly LogPeriod[] {
    return [...this.list].reverse();
  }

  /** True when the workspace has more than one database (the fan-out paths run only then). */
  get spread(): boolean {
    return this.list.length > 1;
  }

  /**
   * The database that holds the workspace's log or group `id`: the one whose range the id is in (an
   * id from before ranges existed, range 0, is the first period's). Null when no period of the
   * workspace can hold it: another workspace's id, or none at all.
   */
  async holding(id: number): Promise<Db | null> {
    const found = this.find(id);
    if (found || !this.reload) return found;
    // A period opened since this request read them (another isolate moved the workspace on).
    this.reloading ??= this.reload().then((periods) => {
      this.list = distinct(periods);
      this.first = periods[0].db;
    });
    await this.reloading;
    return this.find(id);
  }

  /** The workspace's ids by the database holding them, in their order; ids no period can hold are dropped. */
  async byDatabase(ids: readonly number[]): Promise<Map<Db, number[]>> {
    const out = new Map<Db, number[]>();
    for (const id of ids) {
      const db = await this.holding(id);
      if (!db) continue;
      let list = out.get(db);
      if (!list) out.set(db, (list = []));
      list.push(id);
    }
    return out;
  }

  private find(id: number): Db | null {
    if (this.anyId) return this.first;
    const range = idRangeOf(id);
    if (range === 0) return this.first;
    return this.list.find((p) => p.range === range)?.db ?? null;
  }
}

/** Each database once, at its latest place (a workspace may come back to a database it left). */
function distinct(periods: readonly LogPeriod[]): LogPeriod[] {
  const out: LogPeriod[] = [];
  for (let i = periods.length - 1; i >= 0; i--) if (!out.some((p) => p.shard === periods[i].shard)) out.unshift(periods[i]);
  return out;
}

/** Runs `read` on every database of the workspace at once (`i`: its place, newest period first, as in the answer). */
export function eachPeriod<T>(logs: WorkspaceLogs, read: (db: Db, i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(logs.periods.map((p, i) => read(p.db, i)));
}

/**
 * The first `limit` rows of `read` over every database of the workspace, in the order `compare` gives
 * (each database's `read` answering its own first `limit` in that order).
 */
export async function firstOverPeriods<T>(logs: WorkspaceLogs, limit: number, read: (db: Db) => Promise<T[]>, compare: (a: T, b: T) => number): Promise<T[]> {
  const found = await eachPeriod(logs, read);
  if (found.length === 1) return found[0];
  return found.flat().sort(compare).slice(0, limit);
}
