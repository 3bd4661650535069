// Reading a workspace's logs the way users do, through every API read path, for the tests that prove
// each path sees every log once (test/logs/two-tiers.test.ts, test/logs/periods.test.ts).
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { addKey, call, json, type TestKey } from "./api";
import { newTable, pollOperation } from "./tables";

/** Ids in ascending order. */
export const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

export const getLog = async (ws: TestKey, id: number) => {
  const res = await call(`/api/public/v2/requests/${id}`, { key: ws.key });
  return { status: res.status, body: await json(res) };
};
export async function snapshotById(ws: TestKey, ids: number[]): Promise<Map<number, unknown>> {
  const out = new Map<number, unknown>();
  for (const id of ids) {
    const got = await getLog(ws, id);
    expect(got.status).toBe(200);
    out.set(id, got.body);
  }
  return out;
}

/** An NDJSON export's lines (200 expected). */
async function ndjsonLines(res: Response): Promise<any[]> {
  const body = new TextDecoder().decode(await res.arrayBuffer());
  expect(res.status, body).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
  return body === "" ? [] : body.trimEnd().split("\n").map((l) => JSON.parse(l));
}

/** The export of [from, to), one log a line. */
export async function exportedBetween(ws: TestKey, from: number, to: number): Promise<any[]> {
  return ndjsonLines(await call(`/api/public/v2/requests/export?from=${from}&to=${to}`, { key: ws.key }));
}

/** The export of the logs a body ({from?, to?, filter_group?}) selects, one log a line. */
export async function exportedMatching(ws: TestKey, body: Record<string, unknown>): Promise<any[]> {
  return ndjsonLines(await call("/api/public/v2/requests/export", { method: "POST", key: ws.key, json: body }));
}
/** Each id once (the ids, sorted, are exactly `ids`), and every line deep-equal to its GET snapshot. */
export function expectExactly(lines: any[], snapshot: Map<number, unknown>, ids: number[]) {
  expect(sorted(lines.map((l) => l.request_id))).toEqual(sorted(ids));
  for (const l of lines) expect(l).toEqual(snapshot.get(l.request_id));
}

/** Every page of a search (5 a page, so there are several), its items in order; the total must count them. */
export async function searchAll(ws: TestKey, body: Record<string, unknown> = {}, perPage = 5): Promise<any[]> {
  const items: any[] = [];
  for (let page = 1; ; page++) {
    const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { ...body, page, per_page: perPage } });
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(200);
    items.push(...b.items);
    if (!b.has_next) {
      expect(b.total).toBe(items.length);
      return items;
    }
  }
}

/** Each call on a fresh key (suggestions allow 10 calls a minute a key). */
export async function suggest(ws: TestKey, params: Record<string, string>): Promise<string[]> {
  const res = await call(`/api/public/v2/requests/suggestions?${new URLSearchParams(params)}`, { key: await addKey(ws) });
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(200);
  return b.values;
}
/** The analytics answer for a body (200 expected). */
export async function analytics(ws: TestKey, body: unknown) {
  const res = await call("/api/public/v2/requests/analytics", { method: "POST", key: ws.key, json: body });
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(200);
  return b;
}

/** A new dataset group of the workspace. */
export async function createGroup(ws: TestKey) {
  const res = await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: `set-${crypto.randomUUID().slice(0, 8)}` } });
  expect(res.status, await res.clone().text()).toBe(201);
  return json(res);
}
export const datasetPost = (ws: TestKey, path: string, body: unknown) => call(`/api/public/v2/dataset-versions/${path}`, { method: "POST", key: ws.key, json: body });
/** The request_log_id column of the group's draft once its fill completed (polls the queued job). */
export async function filledIds(ws: TestKey, body: Record<string, unknown>): Promise<number[]> {
  const g = await createGroup(ws);
  const res = await datasetPost(ws, "from-filter-params", { dataset_group_id: g.dataset_group.id, variables_to_parse: ["request_log_id"], ...body });
  expect(res.status, await res.clone().text()).toBe(201);
  for (let i = 0; i < 400; i++) {
    const list = await json(await call(`/api/public/v2/datasets?dataset_group_id=${g.dataset_group.id}&status=all`, { key: ws.key }));
    const draft = list.datasets.find((d: any) => d.version_number === -1);
    expect(draft.job_status).not.toBe("FAILED");
    if (draft.job_status === "COMPLETED") {
      const rows = await json(await call(`/api/public/v2/datasets/${draft.id}/rows?per_page=100`, { key: ws.key }));
      expect(rows.columns).toEqual(["request_log_id"]);
      expect(rows.total).toBe(rows.rows.length);
      return rows.rows.map((r: any[]) => r[0].value);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the fill did not finish");
}

/** The request_id column of a sheet imported from the workspace's request logs. */
export async function importedIds(ws: TestKey, source: Record<string, unknown>): Promise<number[]> {
  const t = await newTable(ws);
  const res = await call(`/api/public/v2/tables/${t.id}/sheets`, { method: "POST", key: ws.key, json: { source: { type: "request_logs", ...source } } });
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(202);
  const op = await pollOperation(ws, t.id, b.operation_id, 60_000);
  expect(op.status, JSON.stringify(op)).toBe("completed");
  const sheet = env.SHEETS.get(env.SHEETS.idFromName(b.sheet.id));
  const cols = await sheet.listColumns();
  const col = cols.find((c: { title: string }) => c.title === "request_id");
  if (op.rows_added === 0) return [];
  expect(col).toBeDefined();
  const ids: number[] = [];
  let after: number | null = null;
  for (;;) {
    const page = await sheet.readRows({ after, limit: 500 });
    for (const r of page.rows as any[]) ids.push(Number(r.cells[col!.id].display_value));
    if (!page.hasMore) break;
    after = page.rows[page.rows.length - 1].row_index;
  }
  expect(ids.length).toBe(op.rows_added);
  return ids;
}
