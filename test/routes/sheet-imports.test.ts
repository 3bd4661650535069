import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import type { CellView, RowView } from "../../src/sheets/types";
import { call, createWorkspace, json, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { b64, importAndWait, importFile, newTable, pollOperation } from "../helpers/tables";

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});

const sheetsOf = (tableId: string) => `/api/public/v2/tables/${tableId}/sheets`;
const stub = (sheetId: string) => env.SHEETS.get(env.SHEETS.idFromName(sheetId));

/** The sheet as a grid: column titles and each row's display values in column order. */
async function grid(sheetId: string) {
  const s = stub(sheetId);
  const cols = await s.listColumns();
  const rows: RowView[] = [];
  let after: number | null = null;
  for (;;) {
    const page = await s.readRows({ after, limit: 500 });
    rows.push(...(page.rows as RowView[]));
    if (!page.hasMore) break;
    after = page.rows[page.rows.length - 1].row_index;
  }
  return {
    titles: cols.map((c) => c.title),
    rows: rows.map((r) => cols.map((c) => (r.cells[c.id] as CellView).display_value)),
    cells: rows.map((r) => cols.map((c) => r.cells[c.id] as CellView)),
  };
}

describe("file imports: CSV", () => {
  it("202 pending, then completed: header row → TEXT columns; quotes, embedded commas and newlines, BOM, CRLF", async () => {
    const t = await newTable(ws);
    const csv = '\ufeffname,note,,name\r\n"Smith, J","said ""hi""\r\nthen left",x,dup\r\nplain,,,\r\n\r\n"é ü 😀",3,,\r\n';
    const res = await importFile(ws, t.id, "people.csv", csv);
    expect(res.status).toBe(202);
    const b = await json(res);
    expect(b).toMatchObject({ success: true, operation_id: expect.any(String), sheet: { title: "people.csv", index: 0, row_count: 0 } });
    expect(b.operation).toMatchObject({ operation_id: b.operation_id, status: "pending", progress: 0, source: "file", file_name: "people.csv", error_message: null });
    const op = await pollOperation(ws, t.id, b.operation_id);
    expect(op).toMatchObject({ status: "completed", progress: 100, rows_added: 3, row_count: 3, error_message: null, message: "Imported 3 rows" });
    const g = await grid(b.sheet.id);
    expect(g.titles).toEqual(["name", "note", "Column C", "name (2)"]);
    expect(g.rows).toEqual([
      ["Smith, J", 'said "hi"\r\nthen left', "x", "dup"],
      ["plain", null, null, null],
      ["é ü 😀", "3", null, null],
    ]);
    const sheet = await json(await call(`${sheetsOf(t.id)}/${b.sheet.id}`, { key: ws.key }));
    expect(sheet.sheet).toMatchObject({ row_count: 3, version_count: 1 });
    const listed = await json(await call(sheetsOf(t.id), { key: ws.key }));
    expect(listed.data[0]).toMatchObject({ id: b.sheet.id, row_count: 3, version_count: 1 });
  });

  it("a header-only CSV makes its columns and no rows; title and index apply", async () => {
    const t = await newTable(ws);
    await call(sheetsOf(t.id), { method: "POST", key: ws.key, json: { title: "first" } });
    const { op, sheetId, created } = await importAndWait(ws, t.id, "h.CSV", "a,b\n", { title: "Imported", index: 0 });
    expect(created.sheet).toMatchObject({ title: "Imported", index: 0 });
    expect(op).toMatchObject({ status: "completed", rows_added: 0, row_count: 0 });
    expect((await grid(sheetId)).titles).toEqual(["a", "b"]);
  });
});

describe("file imports: JSON", () => {
  it("an array of objects → columns from the union of keys; structured values kept", async () => {
    const t = await newTable(ws);
    const doc = [{ q: "2+2", a: 4 }, { q: "capital", tags: ["geo", "fr"], meta: { level: 2 } }, { a: null, extra: true, q: "é\"\n" }];
    const { op, sheetId } = await importAndWait(ws, t.id, "qa.json", JSON.stringify(doc, null, 1));
    expect(op).toMatchObject({ status: "completed", rows_added: 3, row_count: 3 });
    const g = await grid(sheetId);
    expect(g.titles).toEqual(["q", "a", "tags", "meta", "extra"]);
    expect(g.rows).toEqual([
      ["2+2", "4", null, null, null],
      ["capital", null, '["geo","fr"]', '{"level":2}', null],
      ['é"\n', null, null, null, "true"],
    ]);
    expect(g.cells[0][1].value).toBe(4);
    expect(g.cells[1][2].value).toEqual(["geo", "fr"]);
    expect(g.cells[1][3].value).toEqual({ level: 2 });
    expect(g.cells[2][4].value).toBe(true);
  });
});

describe("file imports: failures", () => {
  async function failed(fileName: string, base64: string) {
    const t = await newTable(ws);
    const res = await call(sheetsOf(t.id), { method: "POST", key: ws.key, json: { source: { type: "file", file_name: fileName, file_content_base64: base64 } } });
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(202);
    return pollOperation(ws, t.id, b.operation_id);
  }

  it("bad base64, an empty file, and content that is not CSV/JSON end failed with a clear error_message", async () => {
    const cases: [string, string, RegExp][] = [
      ["a.csv", "not base64!!", /not valid base64: invalid base64 character "!"/],
      ["a.csv", "", /the file is empty/],
      ["a.csv", b64("   \n\n"), /empty/],
      ["a.json", b64("  "), /the file is empty/],
      ["a.json", b64('{"a": 1}'), /must be an array of objects; the file holds an object/],
      ["a.json", b64("[1, 2]"), /element 0 is a number/],
      ["a.json", b64('[{"a": 1},'), /not a valid JSON file: unexpected end of JSON/],
      ["a.json", b64("name,age\n"), /not a valid JSON file/],
      ["a.csv", btoa("\u00ff\u00fe\u0000\u0001"), /not UTF-8/],
      ["a.csv", b64('a,b\n"never closed,1\n'), /unclosed quoted field/],
    ];
    for (const [name, content, message] of cases) {
      const op = await failed(name, content);
      expect(op.status, `${name} ${content}`).toBe("failed");
      expect(op.error_message, `${name} ${content}`).toMatch(message);
      expect(op.message).toBe("Import failed");
    }
  }, 60_000);

  it("a file of 500 columns (what a sheet holds) imports; 501 fail, as header or as a longer row or as JSON keys", async () => {
    const header = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(",");
    const t = await newTable(ws);
    const { op } = await importAndWait(ws, t.id, "wide.csv", `${header(500)}\n${header(500)}\n`);
    expect(op.status).toBe("completed");
    const wideJson = JSON.stringify([Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`k${i}`, i]))]);
    for (const [name, content] of [["h.csv", `${header(501)}\n`], ["r.csv", `${header(500)}\n${header(501)}\n`], ["j.json", wideJson]]) {
      const bad = await failed(name, b64(content));
      expect(bad.status, name).toBe("failed");
      expect(bad.error_message, name).toMatch(/more than 500 columns/);
    }
  }, 60_000);

  it("refuses a body that breaks the rules with a 400 and creates nothing", async () => {
    const t = await newTable(ws);
    const bodies = [
      { source: { type: "file", file_name: "a.txt", file_content_base64: b64("x") } },
      { source: { type: "file", file_content_base64: b64("x") } },
      { source: { type: "file", file_name: "a.csv" } },
      { source: { type: "file", file_name: "a.csv", file_content_base64: 12 } },
      { source: "file" },
      { source: { type: "file", file_name: "a.csv", file_content_base64: b64("a\n1\n") }, operation_id: "has space" },
      { source: { type: "file", file_name: "a.csv", file_content_base64: b64("a\n1\n") }, index: -1 },
    ];
    for (const body of bodies) {
      const res = await call(sheetsOf(t.id), { method: "POST", key: ws.key, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).error).toBe("validation_error");
    }
    expect((await json(await call(sheetsOf(t.id), { key: ws.key }))).data).toEqual([]);
    const stored = await env.BLOBS.list({ prefix: `imports/${ws.workspaceId}/` });
    expect(stored.objects).toEqual([]);
  });

  it("a file over the limit is a 413 before anything is stored; one at the limit is accepted", async () => {
    const w = await createWorkspace();
    const t = await newTable(w);
    const limited = { ...env, IMPORT_MAX_FILE_BYTES: "1000" };
    const post = (content: string) =>
      createApp().fetch(
        new Request(`http://api.test${sheetsOf(t.id)}`, {
          method: "POST",
          headers: { "X-API-KEY": w.key, "Content-Type": "application/json" },
          body: JSON.stringify({ source: { type: "file", file_name: "big.csv", file_content_base64: b64(content) } }),
        }),
        limited,
        createExecutionContext(),
      );
    const over = await post(`a\n${"x".repeat(999)}`);
    expect(over.status).toBe(413);
    expect((await json(over)).error).toBe("payload_too_large");
    expect((await env.BLOBS.list({ prefix: `imports/${w.workspaceId}/` })).objects).toEqual([]);
    expect((await json(await call(sheetsOf(t.id), { key: w.key }))).data).toEqual([]);
    const at = await post(`a\n${"x".repeat(998)}`);
    expect(at.status).toBe(202);
    expect((await pollOperation(w, t.id, (await json(at)).operation_id)).status).toBe("completed");
  });
});

describe("file imports: operation_id", () => {
  it("the same operation_id returns the same operation and creates no second sheet; on another table it is a 409", async () => {
    const t = await newTable(ws);
    const opId = `import-${crypto.randomUUID()}`;
    const first = await json(await importFile(ws, t.id, "a.csv", "a\n1\n2\n", { operation_id: opId }));
    expect(first.operation_id).toBe(opId);
    await pollOperation(ws, t.id, opId);
    const again = await importFile(ws, t.id, "other.csv", "b\n3\n", { operation_id: opId });
    expect(again.status).toBe(202);
    const b = await json(again);
    expect(b.operation).toMatchObject({ operation_id: opId, status: "completed", rows_added: 2, file_name: "a.csv" });
    expect(b.sheet.id).toBe(first.sheet.id);
    const sheets = await json(await call(sheetsOf(t.id), { key: ws.key }));
    expect(sheets.data).toHaveLength(1);
    const t2 = await newTable(ws);
    const elsewhere = await importFile(ws, t2.id, "a.csv", "a\n1\n", { operation_id: opId });
    expect(elsewhere.status).toBe(409);
    // Another workspace may use the same operation_id for its own import.
    const w = await createWorkspace();
    const t3 = await newTable(w);
    expect((await importFile(w, t3.id, "a.csv", "a\n1\n", { operation_id: opId })).status).toBe(202);
  });

  it("concurrent requests with one operation_id make one sheet", async () => {
    const t = await newTable(ws);
    const opId = crypto.randomUUID();
    const answers = await Promise.all([1, 2, 3].map(() => importFile(ws, t.id, "a.csv", "a\n1\n", { operation_id: opId }).then(json)));
    expect(new Set(answers.map((a) => a.sheet.id)).size).toBe(1);
    await pollOperation(ws, t.id, opId);
    expect((await json(await call(sheetsOf(t.id), { key: ws.key }))).data).toHaveLength(1);
  });

  it("an unknown operation is a 404", async () => {
    const t = await newTable(ws);
    expect((await call(`${sheetsOf(t.id)}/operations/nope`, { key: ws.key })).status).toBe(404);
  });
});

describe("file imports: a large file streamed through the API", () => {
  it("imports a 20 MB CSV sent as a streamed body, rows exact", async () => {
    const t = await newTable(ws);
    const ROWS = 200_000;
    const line = (i: number) => `${i},"name ${i}, with comma",${"x".repeat(70)}\n`;
    const enc = new TextEncoder();
    let next = 0;
    let carry = "";
    let sentHead = false;
    let done = false;
    // The CSV is generated and base64-encoded as the request body is read: the test never holds it whole.
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (!sentHead) {
          sentHead = true;
          ctl.enqueue(enc.encode('{"title": "big", "source": {"type": "file", "file_name": "big.csv", "file_content_base64": "'));
          carry = "id,name,pad\n";
          return;
        }
        if (done) return ctl.close();
        let chunk = carry;
        while (chunk.length < 48_000 && next < ROWS) chunk += line(next++);
        const usable = next < ROWS ? chunk.length - (chunk.length % 3) : chunk.length;
        carry = chunk.slice(usable);
        ctl.enqueue(enc.encode(b64(chunk.slice(0, usable))));
        if (next >= ROWS && carry === "") {
          ctl.enqueue(enc.encode('"}}'));
          done = true;
        }
      },
    });
    const res = await call(sheetsOf(t.id), { method: "POST", key: ws.key, body, headers: { "Content-Type": "application/json" } });
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(202);
    const op = await pollOperation(ws, t.id, b.operation_id, 120_000);
    expect(op).toMatchObject({ status: "completed", rows_added: ROWS, row_count: ROWS, progress: 100 });
    const s = stub(b.sheet.id);
    expect((await s.stats()).rowCount).toBe(ROWS);
    const last = await s.readRows({ limit: 1, order: "desc" });
    const cols = await s.listColumns();
    expect((last.rows[0].cells[cols[1].id] as CellView).display_value).toBe(`name ${ROWS - 1}, with comma`);
    expect((await json(await call(`${sheetsOf(t.id)}/${b.sheet.id}`, { key: ws.key }))).sheet.row_count).toBe(ROWS);
  }, 180_000);
});

describe("request-log imports", () => {
  it("prompt_version_id and prompt_label_id pick the logs of that prompt version", async () => {
    const w = await createWorkspace();
    const db = env.DB;
    const tpl = await db.prepare("INSERT INTO prompt_templates (workspace_id, name) VALUES (?, ?) RETURNING id").bind(w.workspaceId, `p-${crypto.randomUUID()}`).first<{ id: number }>();
    const v1 = await db.prepare("INSERT INTO prompt_versions (workspace_id, prompt_id, version, prompt_template) VALUES (?, ?, 1, '{}') RETURNING id").bind(w.workspaceId, tpl!.id).first<{ id: number }>();
    await db.prepare("INSERT INTO prompt_versions (workspace_id, prompt_id, version, prompt_template) VALUES (?, ?, 2, '{}')").bind(w.workspaceId, tpl!.id).run();
    const label = await db.prepare("INSERT INTO prompt_labels (workspace_id, prompt_id, prompt_version_id, name) VALUES (?, ?, ?, 'prod') RETURNING id").bind(w.workspaceId, tpl!.id, v1!.id).first<{ id: number }>();
    for (const version of [1, 2, 1]) {
      const res = await call("/log-request", { method: "POST", key: w.key, json: logBody({ prompt_id: tpl!.id, prompt_version_number: version, prompt_input_variables: { v: String(version) } }) });
      expect(res.status).toBe(201);
    }
    const t = await newTable(w);
    for (const source of [{ prompt_version_id: v1!.id }, { prompt_label_id: label!.id }]) {
      const b = await json(await call(sheetsOf(t.id), { method: "POST", key: w.key, json: { source: { type: "request_logs", ...source } } }));
      expect(await pollOperation(w, t.id, b.operation_id)).toMatchObject({ status: "completed", rows_added: 2 });
      expect((await grid(b.sheet.id)).rows.map((r) => r[0])).toEqual(["1", "1"]);
    }
  }, 60_000);

  it("prompt_id is matched as logs record it: one no log names imports nothing (202); an unknown version or label is a 404", async () => {
    const w = await createWorkspace();
    await call("/log-request", { method: "POST", key: w.key, json: logBody({ prompt_id: 424242 }) });
    const t = await newTable(w);
    const post = (source: Record<string, unknown>) => call(sheetsOf(t.id), { method: "POST", key: w.key, json: { source: { type: "request_logs", ...source } } });
    const kept = await post({ prompt_id: 424242 });
    expect(kept.status).toBe(202);
    expect(await pollOperation(w, t.id, (await json(kept)).operation_id)).toMatchObject({ status: "completed", rows_added: 1 });
    const none = await post({ prompt_id: 919191 });
    expect(none.status).toBe(202);
    expect(await pollOperation(w, t.id, (await json(none)).operation_id)).toMatchObject({ status: "completed", rows_added: 0 });
    expect((await post({ prompt_version_id: 919191 })).status).toBe(404);
    expect((await post({ prompt_label_id: 919191 })).status).toBe(404);
  }, 60_000);

  it("imports the logs the filter fields pick, one row per log, columns from input variables and log fields", async () => {
    const w = await createWorkspace();
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call("/log-request", {
        method: "POST",
        key: w.key,
        json: logBody({ prompt_input_variables: i === 3 ? { city: "Oslo", extra: "e" } : { city: `c${i}` }, request_start_time: `2024-01-1${i}T10:00:00Z`, request_end_time: `2024-01-1${i}T10:00:02Z`, tags: ["t"] }),
      });
      ids.push((await json(res)).id);
    }
    const t = await newTable(w);
    const post = (source: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      call(sheetsOf(t.id), { method: "POST", key: w.key, json: { source: { type: "request_logs", ...source }, ...extra } });

    const byIds = await json(await post({ request_log_ids: [ids[1], ids[3], 999999] }));
    expect(byIds.sheet.title).toBe("Request Logs");
    expect(await pollOperation(w, t.id, byIds.operation_id)).toMatchObject({ status: "completed", rows_added: 2, source: "request_logs" });
    const g = await grid(byIds.sheet.id);
    expect(g.titles.slice(0, 3)).toEqual(["city", "request_id", "prompt_name"]);
    expect(g.titles).toContain("extra");
    expect(g.titles).toContain("output");
    expect(g.rows.map((r) => r[0])).toEqual(["c1", "Oslo"]);
    expect(g.rows.map((r) => r[1])).toEqual([String(ids[1]), String(ids[3])]);

    const byTime = await json(await post({ start_time: "2024-01-11T00:00:00Z", end_time: "2024-01-12T23:59:59Z" }, { title: "window" }));
    expect(await pollOperation(w, t.id, byTime.operation_id)).toMatchObject({ status: "completed", rows_added: 2 });
    expect((await grid(byTime.sheet.id)).rows.map((r) => r[0])).toEqual(["c1", "c2"]);

    const none = await json(await post({ prompt_id: 424242 }));
    expect(await pollOperation(w, t.id, none.operation_id)).toMatchObject({ status: "completed", rows_added: 0 });

    expect((await post({ prompt_version_id: 987654 })).status).toBe(404);
    expect((await post({ prompt_label_id: 987654 })).status).toBe(404);
    expect((await post({ prompt_label_id: 0 })).status).toBe(400);
    expect((await post({ request_log_ids: ["x"] })).status).toBe(400);
    expect((await post({ start_time: "yesterday" })).status).toBe(400);
    // Another workspace's logs are never imported.
    const o = await createWorkspace();
    // One log database: the other workspace's log ids are then not this one's, and only the workspace condition keeps them out.
    await shareLogsDb(o, w);
    const ot = await newTable(o);
    const theirs = await json(await call(sheetsOf(ot.id), { method: "POST", key: o.key, json: { source: { type: "request_logs", request_log_ids: ids } } }));
    expect(await pollOperation(o, ot.id, theirs.operation_id)).toMatchObject({ status: "completed", rows_added: 0 });
  }, 60_000);
});
