// Datasets: groups and drafts, fills from request logs on the queue, save-draft, listing and rows.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { runDatasetFill } from "../../src/services/datasets/fill";
import { queueDraftFill } from "../../src/services/datasets/datasets";
import { call, createWorkspace, json, logsOf, shareLogsDb, type TestKey } from "../helpers/api";
import { seedLogs } from "../helpers/logs";

const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;

async function createGroup(ws: TestKey, extra: Record<string, unknown> = {}) {
  const res = await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("set"), ...extra } });
  expect(res.status, await res.clone().text()).toBe(201);
  return json(res);
}

const fill = (ws: TestKey, body: Record<string, unknown>) => call("/api/public/v2/dataset-versions/from-filter-params", { method: "POST", key: ws.key, json: body });

async function datasetsOf(ws: TestKey, groupId: number) {
  const res = await call(`/api/public/v2/datasets?dataset_group_id=${groupId}&status=all&sort_by=id&sort_order=asc`, { key: ws.key });
  expect(res.status).toBe(200);
  return (await json(res)).datasets as any[];
}

/** Waits until the draft's last fill has finished; returns the draft. */
async function waitForDraft(ws: TestKey, groupId: number) {
  for (let i = 0; i < 200; i++) {
    const draft = (await datasetsOf(ws, groupId)).find((d) => d.version_number === -1);
    if (draft && (draft.job_status === "COMPLETED")) return draft;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the fill did not finish");
}

async function rowsOf(ws: TestKey, datasetId: number, query = "") {
  const res = await call(`/api/public/v2/datasets/${datasetId}/rows${query}`, { key: ws.key });
  expect(res.status).toBe(200);
  return json(res);
}

const gpt4o = { logic: "AND", filters: [{ field: "engine", operator: "is", value: "gpt-4o" }] };

describe("POST /api/public/v2/dataset-groups", { timeout: 30_000 }, () => {
  it("creates the group with an empty draft and its external IDs (201)", async () => {
    const ws = await createWorkspace();
    const body = await createGroup(ws, { external_ids: [{ source: "crm", external_id: "g-1" }] });
    expect(body.success).toBe(true);
    expect(body.dataset_group).toMatchObject({ workspace_id: ws.workspaceId, folder_id: null, is_deleted: false });
    expect(body.dataset).toMatchObject({ dataset_group_id: body.dataset_group.id, version_number: -1, column_names: [], filter_params: null, user_id: ws.userId });
    expect(body.external_ids).toEqual([{ source: "crm", external_id: "g-1" }]);
  });

  it("refuses a duplicate name in the workspace (409) but not in another workspace", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const name = uniq("dup");
    await createGroup(a, { name });
    const again = await call("/api/public/v2/dataset-groups", { method: "POST", key: a.key, json: { name } });
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ success: false, error: "conflict" });
    await createGroup(b, { name });
  });

  it("validates the name (1 to 255 characters)", async () => {
    const ws = await createWorkspace();
    for (const name of ["", "x".repeat(256)]) {
      const res = await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name } });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toMatch(/^name: /);
    }
    await createGroup(ws, { name: `${"x".repeat(247)}${crypto.randomUUID().slice(0, 8)}` });
  });

  it("places the group in a folder of the workspace; another workspace's folder is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const folder = await json(await call("/api/public/v2/folders", { method: "POST", key: a.key, json: { name: uniq("f") } }));
    const group = await createGroup(a, { folder_id: folder.folder.id });
    expect(group.dataset_group.folder_id).toBe(folder.folder.id);
    const entities = await json(await call(`/api/public/v2/folders/entities?folder_id=${folder.folder.id}&filter_type=DATASET`, { key: a.key }));
    expect(JSON.stringify(entities)).toContain(group.dataset_group.name);
    const res = await call("/api/public/v2/dataset-groups", { method: "POST", key: b.key, json: { name: uniq("x"), folder_id: folder.folder.id } });
    expect(res.status).toBe(404);
  });

  it("takes workspace_id as PromptLayer's document has it: the key's own, another's is a 404 and creates nothing", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const name = uniq("ws");
    const res = await call("/api/public/v2/dataset-groups", { method: "POST", key: a.key, json: { name, workspace_id: b.workspaceId } });
    expect(res.status).toBe(404);
    const listed = await json(await call(`/api/public/v2/datasets?name=${name}`, { key: a.key }));
    expect(listed.datasets).toEqual([]);
    await createGroup(a, { name, workspace_id: a.workspaceId });
  });

  it("an external ID already on another group is a 409 and creates nothing", async () => {
    const ws = await createWorkspace();
    await createGroup(ws, { external_ids: [{ source: "crm", external_id: "taken" }] });
    const name = uniq("second");
    const res = await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name, external_ids: [{ source: "crm", external_id: "taken" }] } });
    expect(res.status).toBe(409);
    const list = await json(await call(`/api/public/v2/datasets?name=${name}`, { key: ws.key }));
    expect(list.total).toBe(0);
    // Another workspace's mapping neither conflicts nor shows.
    const other = await createWorkspace();
    await createGroup(other, { external_ids: [{ source: "crm", external_id: "taken" }] });
  });

  it("attaches external IDs through the shared routes; another workspace's group is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const g = await createGroup(a);
    const path = `/api/public/v2/dataset-groups/${g.dataset_group.id}/external-ids`;
    expect((await call(path, { method: "POST", key: a.key, json: { source: "s", external_id: "e" } })).status).toBe(201);
    expect((await json(await call(path, { key: a.key }))).external_ids).toEqual([{ source: "s", external_id: "e" }]);
    expect((await call(path, { key: b.key })).status).toBe(404);
  });
});

describe("POST /api/public/v2/dataset-versions/from-filter-params", { timeout: 30_000 }, () => {
  it("answers at once; the job fills the draft with the filter's matches in sort order", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    const res = await fill(ws, { dataset_group_id: g.dataset_group.id, filter_group: gpt4o, sort_by: "request_start_time", sort_order: "desc" });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ success: true, message: "Dataset version creation queued", dataset_id: g.dataset.id, dataset_group_id: g.dataset_group.id, version_number: -1 });
    const draft = await waitForDraft(ws, g.dataset_group.id);
    expect(draft.column_names).toEqual(["n", "topic", "input", "output"]);
    const rows = await rowsOf(ws, g.dataset.id);
    expect(rows.total).toBe(2);
    expect(rows.columns).toEqual(["n", "topic", "input", "output"]);
    // Newest first: SEED[3] (no variables) then SEED[0].
    expect(rows.rows[0].map((c: any) => c.value)).toEqual([null, null, expect.objectContaining({ type: "chat" }), "Blue light scatters more."]);
    expect(rows.rows[1].slice(0, 2)).toEqual([
      { type: "dataset", value: 3 },
      { type: "dataset", value: "cats" },
    ]);
    expect(ids).toHaveLength(4);
  });

  it("persists the filter parameters on the dataset (and none for explicit ids)", async () => {
    const ws = await createWorkspace();
    await seedLogs(ws.key);
    const g = await createGroup(ws);
    await fill(ws, { dataset_group_id: g.dataset_group.id, filter_group: gpt4o, q: "sky", sort_by: "cost", sort_order: "asc", limit: 5, variables_to_parse: ["topic"] });
    const draft = await waitForDraft(ws, g.dataset_group.id);
    expect(draft.filter_params).toEqual({ filter_group: gpt4o, q: "sky", sort_by: "cost", sort_order: "asc", limit: 5, variables_to_parse: ["topic"] });
    expect((await rowsOf(ws, draft.id)).total).toBe(1);
  });

  it("explicit ids take precedence over the filter group, in the order given", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    await fill(ws, { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[2], ids[1], ids[2]], filter_group: gpt4o, variables_to_parse: ["request_log_id", "model"] });
    const draft = await waitForDraft(ws, g.dataset_group.id);
    expect(draft.filter_params).toBeNull();
    const rows = await rowsOf(ws, draft.id);
    expect(rows.columns).toEqual(["request_log_id", "model"]);
    expect(rows.rows.map((r: any[]) => r.map((c) => c.value))).toEqual([
      [ids[2], "gpt-4o-mini"],
      [ids[1], "claude-3"],
    ]);
  });

  it("parses request fields and input variables named in variables_to_parse", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    await fill(ws, { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[0]], variables_to_parse: ["topic", "tags", "latency_ms", "request_start_time", "missing"] });
    const draft = await waitForDraft(ws, g.dataset_group.id);
    const rows = await rowsOf(ws, draft.id);
    expect(rows.rows[0].map((c: any) => c.value)).toEqual(["cats", ["prod", "eu"], 1000, "2024-01-01T00:00:00.000Z", null]);
  });

  it("limit keeps the first N in the sort order", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    await fill(ws, { dataset_group_id: g.dataset_group.id, sort_by: "request_start_time", sort_order: "asc", limit: 2, variables_to_parse: ["request_log_id"] });
    const rows = await rowsOf(ws, (await waitForDraft(ws, g.dataset_group.id)).id);
    expect(rows.rows.map((r: any[]) => r[0].value)).toEqual([ids[0], ids[1]]);
  });

  it("reuses the draft: a second fill answers the same dataset and replaces its rows", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    await fill(ws, { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[0], ids[1]] });
    await waitForDraft(ws, g.dataset_group.id);
    const second = await json(await fill(ws, { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[3]], variables_to_parse: ["request_log_id"] }));
    expect(second.dataset_id).toBe(g.dataset.id);
    await waitForDraft(ws, g.dataset_group.id);
    const rows = await rowsOf(ws, g.dataset.id);
    expect(rows.rows.map((r: any[]) => r[0].value)).toEqual([ids[3]]);
    expect((await datasetsOf(ws, g.dataset_group.id)).filter((d) => d.version_number === -1)).toHaveLength(1);
  });

  it("refuses bad input with a 400 naming the field, and changes nothing", async () => {
    const ws = await createWorkspace();
    const g = await createGroup(ws);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /^dataset_group_id: /],
      [{ dataset_group_id: "x" }, /^dataset_group_id: /],
      [{ dataset_group_id: g.dataset_group.id, limit: 0 }, /^limit: /],
      [{ dataset_group_id: g.dataset_group.id, sort_by: "nope" }, /^sort_by: /],
      [{ dataset_group_id: g.dataset_group.id, sort_order: "up" }, /^sort_order: /],
      [{ dataset_group_id: g.dataset_group.id, filter_group: { filters: [{ field: "nope", operator: "is", value: 1 }] } }, /^filter_group/],
      [{ dataset_group_id: g.dataset_group.id, request_log_ids: [0] }, /^request_log_ids/],
    ];
    for (const [body, message] of cases) {
      const res = await fill(ws, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    const [draft] = await datasetsOf(ws, g.dataset_group.id);
    expect(draft.job_status).toBeNull();
  });

  it("takes at most 50,000 request_log_ids", async () => {
    const ws = await createWorkspace();
    const g = await createGroup(ws);
    const over = await fill(ws, { dataset_group_id: g.dataset_group.id, request_log_ids: Array.from({ length: 50_001 }, (_, i) => i + 1) });
    expect(over.status).toBe(400);
    expect((await json(over)).message).toMatch(/^request_log_ids: at most 50000 items/);
    const [untouched] = await datasetsOf(ws, g.dataset_group.id);
    expect(untouched.job_status).toBeNull();
    // Exactly 50,000 are accepted; ids this workspace does not own are skipped by the job.
    const ok = await fill(ws, { dataset_group_id: g.dataset_group.id, request_log_ids: Array.from({ length: 50_000 }, (_, i) => i + 1) });
    expect(ok.status).toBe(201);
    const draft = await waitForDraft(ws, g.dataset_group.id);
    expect(draft.job_status).toBe("COMPLETED");
    expect((await rowsOf(ws, draft.id)).total).toBe(0);
  });

  it("unknown group or another workspace's group is a 404; another workspace's logs are never copied", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    // One log database: b's log ids are then not a's, and only the workspace condition keeps them out.
    await shareLogsDb(a, b);
    const idsB = await seedLogs(b.key);
    const gB = await createGroup(b);
    expect((await fill(a, { dataset_group_id: gB.dataset_group.id })).status).toBe(404);
    expect((await fill(a, { dataset_group_id: 999_999_999 })).status).toBe(404);
    const gA = await createGroup(a);
    const idsA = await seedLogs(a.key);
    await fill(a, { dataset_group_id: gA.dataset_group.id, request_log_ids: [...idsB, idsA[0]], variables_to_parse: ["request_log_id"] });
    const rows = await rowsOf(a, (await waitForDraft(a, gA.dataset_group.id)).id);
    expect(rows.rows.map((r: any[]) => r[0].value)).toEqual([idsA[0]]);
    // A filter fill only ever sees its own workspace.
    await fill(a, { dataset_group_id: gA.dataset_group.id, variables_to_parse: ["request_log_id"] });
    const all = await rowsOf(a, (await waitForDraft(a, gA.dataset_group.id)).id);
    expect(all.total).toBe(4);
    expect(all.rows.every((r: any[]) => idsA.includes(r[0].value))).toBe(true);
  });
});

describe("the dataset_fill job", { timeout: 30_000 }, () => {
  const auth = (ws: TestKey) => ({ workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 });
  const count = async (datasetId: number) => (await env.DB.prepare("SELECT count(*) AS n FROM dataset_rows WHERE dataset_id = ?").bind(datasetId).first<{ n: number }>())!.n;

  it("is redelivery-safe: a rerun (even after a partial run) adds no duplicate rows", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    const q = await queueDraftFill(getDb(env.DB), auth(ws), { dataset_group_id: g.dataset_group.id, request_log_ids: ids });
    // A crash after the first row: the job is RUNNING with part of its rows written.
    await env.DB.prepare("UPDATE dataset_jobs SET status = 'RUNNING' WHERE id = ?").bind(q.jobId).run();
    await env.DB.prepare(`INSERT INTO dataset_rows (workspace_id, dataset_id, job_id, position, request_log_id, "values") VALUES (?, ?, ?, 0, ?, '{}')`)
      .bind(ws.workspaceId, q.datasetId, q.jobId, ids[0])
      .run();
    expect(await runDatasetFill(getDb(env.DB), logsOf, ws.workspaceId, q.jobId)).toEqual({ state: "completed", datasetId: q.datasetId, rowsAdded: 4 });
    expect(await count(q.datasetId)).toBe(4);
    expect(await runDatasetFill(getDb(env.DB), logsOf, ws.workspaceId, q.jobId)).toEqual({ state: "skipped" });
    expect(await count(q.datasetId)).toBe(4);
  });

  it("a superseded fill writes nothing; another workspace's job id is ignored", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    const older = await queueDraftFill(getDb(env.DB), auth(ws), { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[0]] });
    const newer = await queueDraftFill(getDb(env.DB), auth(ws), { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[1], ids[2]] });
    const other = await createWorkspace();
    expect(await runDatasetFill(getDb(env.DB), logsOf, other.workspaceId, newer.jobId)).toEqual({ state: "skipped" });
    expect(await runDatasetFill(getDb(env.DB), logsOf, ws.workspaceId, newer.jobId)).toMatchObject({ state: "completed", rowsAdded: 2 });
    expect(await runDatasetFill(getDb(env.DB), logsOf, ws.workspaceId, older.jobId)).toEqual({ state: "skipped" });
    expect(await count(newer.datasetId)).toBe(2);
    const job = await env.DB.prepare("SELECT status FROM dataset_jobs WHERE id = ?").bind(older.jobId).first();
    expect(job).toEqual({ status: "SUPERSEDED" });
  });

  it("superseded while it runs, it ends SUPERSEDED, not COMPLETED, and sends no event; the newer fill completes", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    const older = await queueDraftFill(getDb(env.DB), auth(ws), { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[0]] });
    let newer: Awaited<ReturnType<typeof queueDraftFill>> | undefined;
    let batches = 0;
    // A newer from-filter-params call lands between the older job's copying and its completion batch.
    const d1 = new Proxy(env.DB, {
      get(target, key) {
        if (key === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            if (++batches === 2) newer = await queueDraftFill(getDb(env.DB), auth(ws), { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[1], ids[2]] });
            return target.batch(statements);
          };
        }
        const v = (target as any)[key];
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    await runDatasetFill(getDb(d1), logsOf, ws.workspaceId, older.jobId);
    expect(newer).toBeDefined();
    const status = (id: number) => env.DB.prepare("SELECT status FROM dataset_jobs WHERE id = ?").bind(id).first<{ status: string }>();
    expect(await status(older.jobId)).toEqual({ status: "SUPERSEDED" });
    const events = await env.DB.prepare("SELECT count(*) AS n FROM webhook_events WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>();
    expect(events!.n).toBe(0);
    expect(await runDatasetFill(getDb(env.DB), logsOf, ws.workspaceId, newer!.jobId)).toMatchObject({ state: "completed", rowsAdded: 2 });
    expect(await status(newer!.jobId)).toEqual({ status: "COMPLETED" });
    expect(await count(newer!.datasetId)).toBe(2);
  });
});

describe("POST /api/public/v2/dataset-versions/save-draft", { timeout: 30_000 }, () => {
  const save = (ws: TestKey, id: unknown) => call("/api/public/v2/dataset-versions/save-draft", { method: "POST", key: ws.key, json: { dataset_group_id: id } });

  it("numbers saved drafts 1, 2 …; the next fill starts a new draft", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    await fill(ws, { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[0]] });
    await waitForDraft(ws, g.dataset_group.id);
    const first = await save(ws, g.dataset_group.id);
    expect(first.status).toBe(202);
    expect(await json(first)).toMatchObject({ success: true, draft_dataset_id: g.dataset.id, version_number: 1 });
    // No draft left to save.
    expect((await save(ws, g.dataset_group.id)).status).toBe(404);
    const again = await json(await fill(ws, { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[1], ids[2]] }));
    expect(again.dataset_id).not.toBe(g.dataset.id);
    await waitForDraft(ws, g.dataset_group.id);
    expect(await json(await save(ws, g.dataset_group.id))).toMatchObject({ draft_dataset_id: again.dataset_id, version_number: 2 });
    const versions = await datasetsOf(ws, g.dataset_group.id);
    expect(versions.map((d) => d.version_number)).toEqual([1, 2]);
    expect((await rowsOf(ws, g.dataset.id)).total).toBe(1);
    expect((await rowsOf(ws, again.dataset_id)).total).toBe(2);
  });

  it("is a 409 while the draft's fill is still queued", async () => {
    const ws = await createWorkspace();
    const g = await createGroup(ws);
    await queueDraftFill(getDb(env.DB), { workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 }, { dataset_group_id: g.dataset_group.id, request_log_ids: [1] });
    const res = await save(ws, g.dataset_group.id);
    expect(res.status).toBe(409);
    expect((await datasetsOf(ws, g.dataset_group.id))[0].version_number).toBe(-1);
  });

  it("unknown or another workspace's group is a 404; a bad id is a 400", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const g = await createGroup(b);
    expect((await save(a, g.dataset_group.id)).status).toBe(404);
    expect((await save(a, 0)).status).toBe(400);
    expect((await datasetsOf(b, g.dataset_group.id))[0].version_number).toBe(-1);
  });
});

describe("GET /api/public/v2/datasets and rows", { timeout: 30_000 }, () => {
  it("pages, filters by name and external ID, and never shows another workspace's datasets", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const tag = uniq("named");
    const g1 = await createGroup(a, { name: `${tag}-one`, external_ids: [{ source: "crm", external_id: "x1" }] });
    await createGroup(a, { name: `${tag}-two` });
    await createGroup(b, { name: `${tag}-theirs`, external_ids: [{ source: "crm", external_id: "x1" }] });
    const page1 = await json(await call(`/api/public/v2/datasets?name=${tag}&per_page=1&sort_by=name&sort_order=asc`, { key: a.key }));
    expect(page1).toMatchObject({ success: true, page: 1, per_page: 1, total: 2, pages: 2 });
    expect(page1.datasets[0].dataset_group.name).toBe(`${tag}-one`);
    expect(page1.datasets[0].external_ids).toEqual([{ source: "crm", external_id: "x1" }]);
    const byExt = await json(await call("/api/public/v2/datasets?external_source=crm&external_id=x1", { key: a.key }));
    expect(byExt.datasets.map((d: any) => d.id)).toEqual([g1.dataset.id]);
    const none = await json(await call("/api/public/v2/datasets?external_source=crm&external_id=nope", { key: a.key }));
    expect(none.total).toBe(0);
    expect((await call("/api/public/v2/datasets?external_source=crm", { key: a.key })).status).toBe(400);
    expect((await call("/api/public/v2/datasets?per_page=101", { key: a.key })).status).toBe(400);
    const listB = await json(await call(`/api/public/v2/datasets?dataset_group_id=${g1.dataset_group.id}`, { key: b.key }));
    expect(listB.total).toBe(0);
  });

  it("rows are paged and searchable; another workspace's dataset is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const ids = await seedLogs(a.key);
    const g = await createGroup(a);
    await fill(a, { dataset_group_id: g.dataset_group.id, request_log_ids: ids, variables_to_parse: ["request_log_id", "model"] });
    await waitForDraft(a, g.dataset_group.id);
    const p2 = await rowsOf(a, g.dataset.id, "?per_page=3&page=2");
    expect(p2).toMatchObject({ page: 2, per_page: 3, total: 4, pages: 2 });
    expect(p2.rows.map((r: any[]) => r[0].value)).toEqual([ids[3]]);
    const claude = await rowsOf(a, g.dataset.id, "?q=claude");
    expect(claude.rows.map((r: any[]) => r[1].value)).toEqual(["claude-3"]);
    expect((await call(`/api/public/v2/datasets/${g.dataset.id}/rows?per_page=101`, { key: a.key })).status).toBe(400);
    expect((await call(`/api/public/v2/datasets/${g.dataset.id}/rows`, { key: b.key })).status).toBe(404);
    expect((await call(`/api/public/v2/datasets/999999999/rows`, { key: a.key })).status).toBe(404);
    // workspace_id, as PromptLayer's document has it: the key's own, another's is a 404 (as on the list).
    expect((await call(`/api/public/v2/datasets/${g.dataset.id}/rows?workspace_id=${b.workspaceId}`, { key: a.key })).status).toBe(404);
    expect((await call(`/api/public/v2/datasets/${g.dataset.id}/rows?workspace_id=${a.workspaceId}`, { key: a.key })).status).toBe(200);
    expect((await call(`/api/public/v2/datasets/${g.dataset.id}/rows`)).status).toBe(401);
  });
});
