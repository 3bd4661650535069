// Helpers for the smart-table tests: tables, sheets, imports, and polling an import to its end.
import { call, json, type TestKey } from "./api";

export const b64 = (text: string) => {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
};

export async function newTable(ws: TestKey, body: Record<string, unknown> = {}) {
  const res = await call("/api/public/v2/tables", { method: "POST", key: ws.key, json: { create_default_sheet: false, ...body } });
  if (res.status !== 201) throw new Error(`table create: ${res.status} ${await res.text()}`);
  return (await json(res)).table as { id: string; title: string; folder_id: number | null; sheet_count: number };
}

export function importFile(ws: TestKey, tableId: string, fileName: string, content: string, extra: Record<string, unknown> = {}) {
  return call(`/api/public/v2/tables/${tableId}/sheets`, {
    method: "POST",
    key: ws.key,
    json: { source: { type: "file", file_name: fileName, file_content_base64: b64(content) }, ...extra },
  });
}

export async function pollOperation(ws: TestKey, tableId: string, opId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(`/api/public/v2/tables/${tableId}/sheets/operations/${encodeURIComponent(opId)}`, { key: ws.key });
    const b = await json(res);
    if (res.status !== 200) throw new Error(`poll: ${res.status} ${JSON.stringify(b)}`);
    if (b.operation.status === "completed" || b.operation.status === "failed") return b.operation;
    if (Date.now() > deadline) throw new Error(`import still ${b.operation.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Imports a file and waits for the operation to end; returns the final operation and the sheet id. */
export async function importAndWait(ws: TestKey, tableId: string, fileName: string, content: string, extra: Record<string, unknown> = {}) {
  const res = await importFile(ws, tableId, fileName, content, extra);
  const b = await json(res);
  if (res.status !== 202) throw new Error(`import: ${res.status} ${JSON.stringify(b)}`);
  const op = await pollOperation(ws, tableId, b.operation_id);
  return { op, sheetId: b.sheet.id as string, created: b };
}

/** A folder of the workspace (tables may only name folders that exist). */
export async function newFolder(ws: TestKey, name = `f-${crypto.randomUUID()}`): Promise<number> {
  const res = await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name } });
  if (res.status !== 201) throw new Error(`folder create: ${res.status} ${await res.text()}`);
  return (await json(res)).folder.id as number;
}
