// Helpers for the sheet engine tests: a blank sheet, columns, rows, and waiting for a recalculation.
import { call, json, type TestKey } from "./api";
import { newTable } from "./tables";

export interface SheetRef {
  ws: TestKey;
  tableId: string;
  sheetId: string;
  base: string;
}

/** A blank sheet (one TEXT column "Column A", one empty row), in a fresh table. */
export async function newSheet(ws: TestKey): Promise<SheetRef & { columnA: string }> {
  const table = await newTable(ws);
  const res = await call(`/api/public/v2/tables/${table.id}/sheets`, { method: "POST", key: ws.key, json: {} });
  if (res.status !== 201) throw new Error(`sheet create: ${res.status} ${await res.text()}`);
  const sheetId = (await json(res)).sheet.id as string;
  const base = `/api/public/v2/tables/${table.id}/sheets/${sheetId}`;
  const cols = await json(await call(`${base}/columns`, { key: ws.key }));
  return { ws, tableId: table.id, sheetId, base, columnA: cols.data[0].id };
}

export async function addColumn(s: SheetRef, body: Record<string, unknown>) {
  const res = await call(`${s.base}/columns`, { method: "POST", key: s.ws.key, json: body });
  const b = await json(res);
  if (res.status !== 201) throw new Error(`column create: ${res.status} ${JSON.stringify(b)}`);
  return b as { column: { id: string; title: string; type: string }; version: number; stale_count: number; cells: any[] };
}

export async function addRows(s: SheetRef, body: Record<string, unknown>) {
  const res = await call(`${s.base}/rows`, { method: "POST", key: s.ws.key, json: body });
  const b = await json(res);
  if (res.status !== 201) throw new Error(`rows: ${res.status} ${JSON.stringify(b)}`);
  return b;
}

export async function rows(s: SheetRef, query = "") {
  const res = await call(`${s.base}/rows${query}`, { key: s.ws.key });
  if (res.status !== 200) throw new Error(`rows: ${res.status} ${await res.text()}`);
  return json(res);
}

export async function cell(s: SheetRef, id: string) {
  const res = await call(`${s.base}/cells/${id}`, { key: s.ws.key });
  if (res.status !== 200) throw new Error(`cell: ${res.status} ${await res.text()}`);
  return (await json(res)).cell;
}

export function patchCell(s: SheetRef, id: string, body: unknown) {
  return call(`${s.base}/cells/${id}`, { method: "PATCH", key: s.ws.key, json: body });
}

/** Polls an operation until it has no queued or running cells. */
export async function waitOperation(s: SheetRef, opId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(`${s.base}/operations/${opId}`, { key: s.ws.key });
    const b = await json(res);
    if (res.status !== 200) throw new Error(`operation: ${res.status} ${JSON.stringify(b)}`);
    if (b.operation.pending_count === 0) return b.operation;
    if (Date.now() > deadline) throw new Error(`operation still ${b.operation.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The sheet's version_count as D1's listing has it, once it reaches `atLeast` (cell edits copy it off the request path). */
export async function listedVersion(sheetId: string, atLeast: number, timeoutMs = 5_000): Promise<number> {
  const { env } = await import("cloudflare:workers");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await env.DB.prepare(`SELECT version_count FROM sheets WHERE id = ?`).bind(sheetId).first<{ version_count: number }>();
    if (row!.version_count >= atLeast || Date.now() > deadline) return row!.version_count;
    await new Promise((r) => setTimeout(r, 20));
  }
}
