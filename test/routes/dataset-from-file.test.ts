// POST /api/public/v2/dataset-versions/from-file: the file read whole before the answer (400 naming
// the line, 413 over the size limits), rows loaded into the draft by the queued job (end to end and
// as a unit: redelivery, supersession, the dead-letter queue), and workspace isolation.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { createApp } from "../../src/app";
import { getDb } from "../../src/db/client";
import { runDatasetFill } from "../../src/services/datasets/fill";
import { call, createWorkspace, json, logsOf, type TestKey } from "../helpers/api";
import { seedLogs } from "../helpers/logs";
import { b64 } from "../helpers/tables";

const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const PATH = "/api/public/v2/dataset-versions/from-file";

async function createGroup(ws: TestKey) {
  const res = await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("set") } });
  expect(res.status, await res.clone().text()).toBe(201);
  const body = await json(res);
  return { groupId: body.dataset_group.id as number, draftId: body.dataset.id as number };
}

const upload = (ws: TestKey, groupId: number, fileName: string, content: string) =>
  call(PATH, { method: "POST", key: ws.key, json: { dataset_group_id: groupId, file_name: fileName, file_content_base64: b64(content) } });

/** The same call through an app with other bindings (a smaller limit, a queue that drops or refuses). */
const uploadWith = (bindings: Record<string, unknown>, ws: TestKey, body: unknown) =>
  createApp().fetch(
    new Request(`http://api.test${PATH}`, { method: "POST", headers: { "X-API-KEY": ws.key, "Content-Type": "application/json" }, body: JSON.stringify(body) }),
    { ...env, ...bindings },
    createExecutionContext(),
  );
/** A queue that accepts messages and delivers none: the job stays QUEUED for a test to run by hand. */
const droppingQueue = { JOBS: { send: async () => undefined } as unknown as Queue };

async function datasetsOf(ws: TestKey, groupId: number) {
  const res = await call(`/api/public/v2/datasets?dataset_group_id=${groupId}&status=all&sort_by=id&sort_order=asc`, { key: ws.key });
  expect(res.status).toBe(200);
  return (await json(res)).datasets as any[];
}

async function waitForDraft(ws: TestKey, groupId: number, status = "COMPLETED") {
  for (let i = 0; i < 400; i++) {
    const draft = (await datasetsOf(ws, groupId)).find((d) => d.version_number === -1);
    if (draft && draft.job_status === status) return draft;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the job did not reach ${status}`);
}

async function rowsOf(ws: TestKey, datasetId: number, page = 1) {
  const res = await call(`/api/public/v2/datasets/${datasetId}/rows?per_page=100&page=${page}`, { key: ws.key });
  expect(res.status).toBe(200);
  return json(res);
}
const values = (rows: any) => rows.rows.map((r: any[]) => r.map((c) => c.value));

const storedFiles = async (ws: TestKey) => (await env.BLOBS.list({ prefix: `dataset-files/${ws.workspaceId}/` })).objects;
/** The job deletes its file just after it marks itself COMPLETED: a moment later. */
async function expectNoFiles(ws: TestKey) {
  for (let i = 0; i < 200 && (await storedFiles(ws)).length > 0; i++) await new Promise((r) => setTimeout(r, 25));
  expect(await storedFiles(ws)).toEqual([]);
}
const jobsOf = async (datasetId: number) =>
  (await env.DB.prepare("SELECT id, status, rows_added, params FROM dataset_jobs WHERE dataset_id = ? ORDER BY id").bind(datasetId).all<any>()).results;

/** Asserts a refusal: its status, that the message names the file field and matches, and that nothing was queued or kept. */
async function expectRefused(ws: TestKey, draftId: number, res: Response, status: number, message: RegExp) {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(body.error).toBe(status === 413 ? "payload_too_large" : status === 404 ? "not_found" : "validation_error");
  expect(body.message).toMatch(message);
  expect(await jobsOf(draftId)).toEqual([]);
  expect(await storedFiles(ws)).toEqual([]);
}

describe("from-file: CSV and JSON into the draft", { timeout: 60_000 }, () => {
  it("CSV: 201 at once, then the draft holds the rows in file order, the header's columns, text cells; the stored file is deleted", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const csv = '\ufeffquestion,expected answer,n\r\n"What, exactly?","said ""hi""\r\nthen left",1\r\n\r\nplain,,\r\nshort\r\n"é ü 😀",x,3\r\n';
    const res = await upload(ws, groupId, "support-eval.CSV", csv);
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ success: true, message: "Dataset version creation job queued", dataset_id: draftId, dataset_group_id: groupId, version_number: -1 });
    const draft = await waitForDraft(ws, groupId);
    expect(draft).toMatchObject({ id: draftId, column_names: ["question", "expected answer", "n"], filter_params: null, job_status: "COMPLETED" });
    const rows = await rowsOf(ws, draftId);
    expect(rows.columns).toEqual(["question", "expected answer", "n"]);
    expect(values(rows)).toEqual([
      ["What, exactly?", 'said "hi"\r\nthen left', "1"],
      ["plain", "", ""],
      ["short", null, null],
      ["é ü 😀", "x", "3"],
    ]);
    expect((await jobsOf(draftId)).map((j) => [j.status, j.rows_added])).toEqual([["COMPLETED", 4]]);
    await expectNoFiles(ws);
    // A loaded draft saves like any other.
    const saved = await call("/api/public/v2/dataset-versions/save-draft", { method: "POST", key: ws.key, json: { dataset_group_id: groupId } });
    expect(saved.status).toBe(202);
    expect(await json(saved)).toMatchObject({ draft_dataset_id: draftId, version_number: 1 });
  });

  it("JSON: an array of objects; columns are the keys in first-appearance order, values kept as they are, missing keys null", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const data = [
      { question: "What is it?", meta: { tags: ["a", "b"] }, score: 0.5 },
      { score: 2, answer: "A platform", question: null },
      { flag: true },
    ];
    expect((await upload(ws, groupId, "eval.json", JSON.stringify(data, null, 2))).status).toBe(201);
    const draft = await waitForDraft(ws, groupId);
    expect(draft.column_names).toEqual(["question", "meta", "score", "answer", "flag"]);
    expect(values(await rowsOf(ws, draftId))).toEqual([
      ["What is it?", { tags: ["a", "b"] }, 0.5, null, null],
      [null, null, 2, "A platform", null],
      [null, null, null, null, true],
    ]);
  });

  it("reads file_content_base64 whatever its place in the body, and loads files of many statements (2,500 rows)", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const lines = ["id,text", ...Array.from({ length: 2500 }, (_, i) => `${i},row ${i}`)];
    // The file before its name: the body is read to its end before the file is.
    const res = await call(PATH, { method: "POST", key: ws.key, body: `{"file_content_base64": "${b64(lines.join("\n"))}", "file_name": "big.csv", "dataset_group_id": ${groupId}}`, headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(201);
    await waitForDraft(ws, groupId);
    const first = await rowsOf(ws, draftId);
    expect(first.total).toBe(2500);
    expect(values(first)[0]).toEqual(["0", "row 0"]);
    const last = await rowsOf(ws, draftId, 25);
    expect(values(last)[99]).toEqual(["2499", "row 2499"]);
  });

  it("replaces the draft's earlier rows (a fill from logs or an earlier file); add-request-log then follows the file's columns", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const { groupId, draftId } = await createGroup(ws);
    await call("/api/public/v2/dataset-versions/from-filter-params", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, request_log_ids: ids } });
    await waitForDraft(ws, groupId);
    expect((await upload(ws, groupId, "a.csv", "topic,note\nbirds,first\n")).status).toBe(201);
    await waitForDraft(ws, groupId);
    expect((await upload(ws, groupId, "b.csv", "topic,note\nfish,second\nants,third\n")).status).toBe(201);
    const draft = await waitForDraft(ws, groupId);
    expect(draft.column_names).toEqual(["topic", "note"]);
    expect(values(await rowsOf(ws, draftId))).toEqual([
      ["fish", "second"],
      ["ants", "third"],
    ]);
    const added = await call("/api/public/v2/dataset-versions/add-request-log", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, request_log_id: ids[0] } });
    expect(added.status).toBe(201);
    expect((await datasetsOf(ws, groupId)).find((d) => d.id === draftId).column_names).toEqual(["topic", "note"]);
    expect(values(await rowsOf(ws, draftId))).toEqual([
      ["fish", "second"],
      ["ants", "third"],
      ["cats", null],
    ]);
  });

  it("creates the draft when the group has none (after a save)", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    expect((await call("/api/public/v2/dataset-versions/save-draft", { method: "POST", key: ws.key, json: { dataset_group_id: groupId } })).status).toBe(202);
    const res = await upload(ws, groupId, "a.json", '[{"a": 1}]');
    expect(res.status).toBe(201);
    const { dataset_id } = await json(res);
    expect(dataset_id).not.toBe(draftId);
    await waitForDraft(ws, groupId);
    expect(values(await rowsOf(ws, dataset_id))).toEqual([[1]]);
  });
});

describe("from-file: refusals", { timeout: 60_000 }, () => {
  it("a body that breaks the rules is a 400 (a non-JSON body a 415), with nothing queued or stored", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const ok = { dataset_group_id: groupId, file_name: "a.csv", file_content_base64: b64("a\n1\n") };
    const bodies: [unknown, RegExp][] = [
      [{ ...ok, dataset_group_id: undefined }, /^dataset_group_id: /],
      [{ ...ok, dataset_group_id: 0 }, /^dataset_group_id: /],
      [{ ...ok, dataset_group_id: "1" }, /^dataset_group_id: /],
      [{ ...ok, file_name: undefined }, /^file_name: /],
      [{ ...ok, file_name: "a.txt" }, /^file_name: must end in \.csv or \.json/],
      [{ ...ok, file_name: "" }, /^file_name: /],
      [{ ...ok, file_name: `${"x".repeat(252)}.csv` }, /^file_name: must be at most 255 characters/],
      [{ ...ok, file_content_base64: undefined }, /^file_content_base64: /],
      [{ ...ok, file_content_base64: 12 }, /^file_content_base64: /],
      [{ ...ok, file_content_base64: "" }, /^file_content_base64: the file is empty/],
      [{ ...ok, file_content_base64: "not base64!!" }, /^file_content_base64 is not valid base64: invalid base64 character "!"/],
      [[ok], /^body: must be a JSON object/],
    ];
    for (const [body, message] of bodies) {
      const res = await call(PATH, { method: "POST", key: ws.key, json: body });
      await expectRefused(ws, draftId, res, 400, message);
    }
    const malformed = await call(PATH, { method: "POST", key: ws.key, body: '{"dataset_group_id": 1, "file_content_base64": "YQ==', headers: { "Content-Type": "application/json" } });
    await expectRefused(ws, draftId, malformed, 400, /^body: malformed JSON/);
    const text = await call(PATH, { method: "POST", key: ws.key, body: "a,b\n1,2\n", headers: { "Content-Type": "text/csv" } });
    expect(text.status).toBe(415);
    // At the name's limit the body is accepted.
    expect((await call(PATH, { method: "POST", key: ws.key, json: { ...ok, file_name: `${"x".repeat(251)}.csv` } })).status).toBe(201);
  });

  it("a bad CSV is a 400 naming the line (lines of quoted newlines counted); nothing is queued", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const cases: [string, RegExp][] = [
      ['q,a\n"multi\nline",1\nx,2,3\n', /^file_content_base64: line 4: 3 fields, but the header has 2$/],
      ["a,b\n1,2\n\n\"open,3\n4,5\n", /^file_content_base64: unclosed quoted field starting on line 4$/],
      ["a,,c\n1,2,3\n", /^file_content_base64: line 1: column 2 of the header has no name$/],
      ["\n\na, ,c\n1,2,3\n", /^file_content_base64: line 3: column 2 of the header has no name$/],
      ["a,b,a\n1,2,3\n", /^file_content_base64: line 1: the header names column "a" twice \(columns 1 and 3\)$/],
      ["a,b\n", /^file_content_base64: the file holds no rows$/],
      ["\n \n", /^file_content_base64: the file holds no rows$/],
      ["a\u0000b\n1\n", /^file_content_base64: the file holds binary data/],
    ];
    for (const [csv, message] of cases) await expectRefused(ws, draftId, await upload(ws, groupId, "bad.csv", csv), 400, message);
    const latin1 = btoa(String.fromCharCode(...new TextEncoder().encode("name\n"), 0xe9, 0x0a));
    const res = await call(PATH, { method: "POST", key: ws.key, json: { dataset_group_id: groupId, file_name: "l.csv", file_content_base64: latin1 } });
    await expectRefused(ws, draftId, res, 400, /^file_content_base64: the file is not UTF-8 text$/);
  });

  it("a bad JSON file is a 400 naming the line; nothing is queued", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const cases: [string, RegExp][] = [
      ['[\n  {"a": 1},\n  {"a": 2,}\n]', /^file_content_base64: line 3: not valid JSON \(invalid JSON value\)$/],
      ['[{"a": 1}\n\n {"a": 2}]', /^file_content_base64: line 3: not valid JSON \(expected ',' or '\]'\)$/],
      ['[\n{"a": 1},\n"x"\n]', /^file_content_base64: line 3: element 1 of the array is a string, not an object$/],
      ['[{"a": 1},\n[1]]', /^file_content_base64: line 2: element 1 of the array is an array, not an object$/],
      ['[\n{"a": 1},\n{"": 2}]', /^file_content_base64: line 3: a key of element 1 has no name$/],
      ['[{"a": 1}', /^file_content_base64: line 1: not valid JSON \(unexpected end of JSON\)$/],
      ['{"a": 1}', /^file_content_base64: the file must be a JSON array of objects; it holds an object$/],
      ["\n\n42", /^file_content_base64: line 3: the file must be a JSON array of objects$/],
      ["[]", /^file_content_base64: the file holds no rows$/],
      ["  \n", /^file_content_base64: the file is empty$/],
    ];
    for (const [text, message] of cases) await expectRefused(ws, draftId, await upload(ws, groupId, "bad.json", text), 400, message);
  });

  it("another workspace's group, or an unknown one, is a 404 and the stored file is dropped", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const theirs = await createGroup(b);
    const mine = await createGroup(a);
    await expectRefused(a, theirs.draftId, await upload(a, theirs.groupId, "a.csv", "x\n1\n"), 404, /dataset group/);
    await expectRefused(a, mine.draftId, await upload(a, 999_999_999, "a.csv", "x\n1\n"), 404, /dataset group/);
    expect((await rowsOf(b, theirs.draftId)).total).toBe(0);
    expect(await storedFiles(b)).toEqual([]);
  });
});

describe("from-file: limits, on both sides", { timeout: 120_000 }, () => {
  it("the file: at IMPORT_MAX_FILE_BYTES decoded it is taken, one byte over is a 413 while streaming", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const limited = { IMPORT_MAX_FILE_BYTES: "1000" };
    const body = (content: string) => ({ dataset_group_id: groupId, file_name: "big.csv", file_content_base64: b64(content) });
    await expectRefused(ws, draftId, await uploadWith(limited, ws, body(`a\n${"x".repeat(999)}`)), 413, /^file_content_base64: the file is larger than 1000 bytes$/);
    const at = await uploadWith(limited, ws, body(`a\n${"x".repeat(998)}`));
    expect(at.status).toBe(201);
    await waitForDraft(ws, groupId);
    expect(values(await rowsOf(ws, draftId))).toEqual([["x".repeat(998)]]);
  });

  it("columns: 500 are taken, 501 are a 400 (CSV header or JSON keys); names of 255 characters are taken, 256 are a 400", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const header = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);
    const wideJson = (n: number) => JSON.stringify([{ a: 1 }, Object.fromEntries(header(n).map((k) => [k, 1]))]);
    await expectRefused(ws, draftId, await upload(ws, groupId, "w.csv", `${header(501).join(",")}\n1\n`), 400, /^file_content_base64: line 1: the file has more than 500 columns$/);
    // With "a" first, 500 more keys make 501.
    await expectRefused(ws, draftId, await upload(ws, groupId, "w.json", wideJson(500)), 400, /^file_content_base64: line 1: the file has more than 500 columns$/);
    await expectRefused(ws, draftId, await upload(ws, groupId, "n.csv", `${"n".repeat(256)}\n1\n`), 400, /^file_content_base64: line 1: column 1 of the header has a name longer than 255 characters$/);
    await expectRefused(ws, draftId, await upload(ws, groupId, "n.json", `[{"${"k".repeat(256)}": 1}]`), 400, /^file_content_base64: line 1: a key of element 0 has a name longer than 255 characters$/);

    expect((await upload(ws, groupId, "w.csv", `${header(500).join(",")}\n1\n`)).status).toBe(201);
    expect((await waitForDraft(ws, groupId)).column_names).toHaveLength(500);
    expect((await upload(ws, groupId, "w.json", wideJson(499))).status).toBe(201);
    expect((await waitForDraft(ws, groupId)).column_names).toHaveLength(500);
    expect((await upload(ws, groupId, "n.csv", `${"n".repeat(255)}\n1\n`)).status).toBe(201);
    expect((await waitForDraft(ws, groupId)).column_names).toEqual(["n".repeat(255)]);
  });

  it("fields: as many as the header is taken, one more is a 400; rows: one is enough, none is a 400", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    await expectRefused(ws, draftId, await upload(ws, groupId, "f.csv", "a,b\n1,2\n1,2,\n"), 400, /^file_content_base64: line 3: 3 fields, but the header has 2$/);
    await expectRefused(ws, draftId, await upload(ws, groupId, "f.csv", "a,b\n"), 400, /holds no rows/);
    expect((await upload(ws, groupId, "f.csv", "a,b\n1,2\n")).status).toBe(201);
    await waitForDraft(ws, groupId);
    expect(values(await rowsOf(ws, draftId))).toEqual([["1", "2"]]);
  });

  it("a row: 1,000,000 bytes as JSON is taken (bytes, not characters), one more is a 413 naming its line", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    // {"a":"…"} is 8 bytes around the value; "é" is 2 bytes in UTF-8.
    const value = "é".repeat(499_996);
    await expectRefused(ws, draftId, await upload(ws, groupId, "r.csv", `a\nshort\n${value}x\n`), 413, /^file_content_base64: line 3: the row is larger than 1000000 bytes as JSON$/);
    await expectRefused(ws, draftId, await upload(ws, groupId, "r.json", `[{"a": "short"},\n {"a": "${value}x"}]`), 413, /^file_content_base64: line 2: the row is larger than 1000000 bytes as JSON$/);
    expect((await upload(ws, groupId, "r.csv", `a\n${value}\n`)).status).toBe(201);
    await waitForDraft(ws, groupId);
    expect((await rowsOf(ws, draftId)).rows[0][0].value).toBe(value);
    expect((await upload(ws, groupId, "r.json", `[{"a": "${value}"}]`)).status).toBe(201);
    await waitForDraft(ws, groupId);
    expect((await rowsOf(ws, draftId)).rows[0][0].value).toBe(value);
  });
});

describe("from-file: the job", { timeout: 60_000 }, () => {
  /** A from-file call whose message is dropped: its job stays QUEUED, with its file stored. */
  async function queuedJob(ws: TestKey, groupId: number, fileName: string, content: string) {
    const res = await uploadWith(droppingQueue, ws, { dataset_group_id: groupId, file_name: fileName, file_content_base64: b64(content) });
    expect(res.status).toBe(201);
    const { dataset_id } = await json(res);
    const jobs = await jobsOf(dataset_id);
    const job = jobs[jobs.length - 1];
    expect(job.status).toBe("QUEUED");
    return { datasetId: dataset_id as number, jobId: job.id as number, blobKey: JSON.parse(job.params).file.blob_key as string };
  }

  it("is a dataset_fill message the consumer runs and acknowledges", async () => {
    const ws = await createWorkspace();
    const { groupId } = await createGroup(ws);
    const { datasetId, jobId } = await queuedJob(ws, groupId, "a.csv", "a\n1\n2\n");
    const batch = createMessageBatch("promptedge-jobs", [{ id: "m1", timestamp: new Date(), attempts: 1, body: { v: 1, kind: "dataset_fill", workspace_id: ws.workspaceId, job_id: jobId } }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["m1"]);
    expect(values(await rowsOf(ws, datasetId))).toEqual([["1"], ["2"]]);
    expect(await storedFiles(ws)).toEqual([]);
  });

  it("is redelivery-safe: a rerun after a partial load resumes after the rows written, and a finished job does nothing", async () => {
    const ws = await createWorkspace();
    const { groupId } = await createGroup(ws);
    const { datasetId, jobId } = await queuedJob(ws, groupId, "a.json", '[{"n": 0}, {"n": 1}, {"n": 2}]');
    // A crash after the first statement, which wrote row 0.
    await env.DB.prepare(`INSERT INTO dataset_rows (workspace_id, dataset_id, job_id, position, "values") VALUES (?, ?, ?, 0, '{"n":0}')`).bind(ws.workspaceId, datasetId, jobId).run();
    await env.DB.prepare("UPDATE dataset_jobs SET status = 'RUNNING' WHERE id = ?").bind(jobId).run();
    const db = getDb(env.DB);
    expect(await runDatasetFill(db, logsOf, ws.workspaceId, jobId, env.BLOBS)).toEqual({ state: "loaded", datasetId, rowsAdded: 3 });
    expect(await runDatasetFill(db, logsOf, ws.workspaceId, jobId, env.BLOBS)).toEqual({ state: "skipped" });
    expect(values(await rowsOf(ws, datasetId))).toEqual([[0], [1], [2]]);
    expect(await storedFiles(ws)).toEqual([]);
  });

  it("an older job a newer fill superseded does nothing and drops its file; a job whose file is gone fails", async () => {
    const ws = await createWorkspace();
    const { groupId } = await createGroup(ws);
    const older = await queuedJob(ws, groupId, "a.csv", "a\nold\n");
    const newer = await queuedJob(ws, groupId, "b.csv", "b\nnew\n");
    const db = getDb(env.DB);
    expect(await runDatasetFill(db, logsOf, ws.workspaceId, older.jobId, env.BLOBS)).toEqual({ state: "skipped" });
    expect(await env.BLOBS.head(older.blobKey)).toBeNull();
    expect(await env.BLOBS.head(newer.blobKey)).not.toBeNull();
    await env.BLOBS.delete(newer.blobKey);
    expect(await runDatasetFill(db, logsOf, ws.workspaceId, newer.jobId, env.BLOBS)).toEqual({ state: "failed" });
    expect((await jobsOf(newer.datasetId)).map((j) => j.status)).toEqual(["SUPERSEDED", "FAILED"]);
  });

  it("given up by the dead-letter queue: FAILED, and its file is deleted", async () => {
    const ws = await createWorkspace();
    const { groupId } = await createGroup(ws);
    const { datasetId, jobId, blobKey } = await queuedJob(ws, groupId, "a.csv", "a\n1\n");
    const batch = createMessageBatch("promptedge-jobs-dlq", [{ id: "d1", timestamp: new Date(), attempts: 1, body: { v: 1, kind: "dataset_fill", workspace_id: ws.workspaceId, job_id: jobId } }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["d1"]);
    expect((await jobsOf(datasetId)).map((j) => j.status)).toEqual(["FAILED"]);
    expect(await env.BLOBS.head(blobKey)).toBeNull();
  });

  it("a job the queue refuses is FAILED at once (500) and its file deleted; the draft is not left busy", async () => {
    const ws = await createWorkspace();
    const { groupId, draftId } = await createGroup(ws);
    const refusing = { JOBS: { send: async () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue };
    const res = await uploadWith(refusing, ws, { dataset_group_id: groupId, file_name: "a.csv", file_content_base64: b64("a\n1\n") });
    expect(res.status).toBe(500);
    expect((await jobsOf(draftId)).map((j) => j.status)).toEqual(["FAILED"]);
    expect(await storedFiles(ws)).toEqual([]);
    expect((await call("/api/public/v2/dataset-versions/save-draft", { method: "POST", key: ws.key, json: { dataset_group_id: groupId } })).status).toBe(202);
  });
});
