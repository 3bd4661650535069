// Provider keys in one order for every LLM call: the workspace's environment variable first, then the
// Worker's secret (vitest.config.ts gives the Worker OPENAI_API_KEY=test-key and no Anthropic key).
// The fake provider (test/fake-upstream.mjs) marks answers made with the workspace's key, so each test
// sees which key a table column, an evaluation column and the playground sent.
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { addColumn, addRows, cell, newSheet, rows, waitOperation } from "../helpers/sheet-data";

const MARK = " [workspace key]";
const SETTINGS = "the console's Settings page (/console#/settings)";
const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const setVar = async (ws: TestKey, key: string, value: string) =>
  expect((await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key, value } })).status).toBe(201);
const inline = (text: string) => ({ prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text }] }] } });

/** A PROMPT_TEMPLATE column over one row, computed: its cell's status, value and error. */
async function columnCell(ws: TestKey, engine: Record<string, unknown>) {
  const s = await newSheet(ws);
  await addRows(s, { count: 1, values: [{ [s.columnA]: "hello" }] });
  const P = (await addColumn(s, { title: "P", type: "PROMPT_TEMPLATE", config: { template: inline("[[reply:from the column]] {x}"), prompt_template_variable_mappings: { x: "Column A" }, engine } })).column.id;
  const id = (await rows(s)).data[0].cells[P].id;
  const started = await json(await call(`${s.base}/cells/${id}/recalculations`, { method: "POST", key: ws.key }));
  await waitOperation(s, started.execution_id);
  return cell(s, id);
}

/** An evaluation pipeline with one PROMPT_TEMPLATE column over a one-row dataset, run: its evaluated cell. */
async function evaluationCell(ws: TestKey) {
  const log = await json(await call("/log-request", { method: "POST", key: ws.key, json: logBody({ prompt_input_variables: { question: "q" } }) }));
  const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("keys") } }));
  const groupId = g.dataset_group.id as number;
  await call("/api/public/v2/dataset-versions/from-filter-params", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, request_log_ids: [log.id], variables_to_parse: ["question"] } });
  for (let i = 0; i < 400; i++) {
    const list = await json(await call(`/api/public/v2/datasets?dataset_group_id=${groupId}`, { key: ws.key }));
    if (list.datasets[0]?.job_status === "COMPLETED") break;
    await new Promise((r) => setTimeout(r, 25));
  }
  await call("/api/public/v2/dataset-versions/save-draft", { method: "POST", key: ws.key, json: { dataset_group_id: groupId } });
  const columns = [{ column_type: "PROMPT_TEMPLATE", name: "answer", configuration: { template: inline("[[reply:from the evaluation]] {question}"), prompt_template_variable_mappings: { question: "question" }, engine: { provider: "openai", model: "gpt-4o-mini" } } }];
  const created = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, name: uniq("eval"), columns } });
  expect(created.status, await created.clone().text()).toBe(201);
  const run = await json(await call(`/reports/${(await json(created)).report_id}/run`, { method: "POST", key: ws.key, json: { name: uniq("run") } }));
  for (let i = 0; i < 400; i++) {
    if ((await json(await call(`/reports/${run.report_id}`, { key: ws.key }))).status === "COMPLETED") break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const got = await json(await call(`/api/public/v2/evaluations/${run.report_id}/rows`, { key: ws.key }));
  return got.rows[0].find((c: { type?: string }) => c?.type === "eval");
}

const playground = (ws: TestKey, provider = "openai") =>
  call("/api/public/v2/prompt-runs", {
    method: "POST",
    key: ws.key,
    json: { prompt_version: { ...inline("[[reply:from the playground]]"), metadata: { model: { provider, name: provider === "openai" ? "gpt-4o-mini" : "claude-3-5-haiku-latest" } } } },
  });

describe("provider keys: the workspace's variable, then the Worker's secret", { timeout: 60_000 }, () => {
  it("a table column uses the workspace's key over the Worker's, the Worker's without one, and names the Settings page with neither", async () => {
    const own = await createWorkspace();
    await setVar(own, "OPENAI_API_KEY", "workspace-key");
    expect(await columnCell(own, { provider: "openai", model: "gpt-4o-mini" })).toMatchObject({ status: "COMPLETED", value: `from the column${MARK}` });
    const bare = await createWorkspace();
    expect(await columnCell(bare, { provider: "openai", model: "gpt-4o-mini" })).toMatchObject({ status: "COMPLETED", value: "from the column" });
    const none = await columnCell(bare, { provider: "anthropic", model: "claude-3-5-haiku-latest" });
    expect(none.status).toBe("FAILED");
    expect(none.error).toContain(`no ANTHROPIC_API_KEY is set for this workspace: set it on ${SETTINGS}`);
  });

  it("an evaluation column uses the workspace's key over the Worker's, and the Worker's without one", async () => {
    const own = await createWorkspace();
    await setVar(own, "OPENAI_API_KEY", "workspace-key");
    expect(await evaluationCell(own)).toMatchObject({ status: "COMPLETED", value: `from the evaluation${MARK}` });
    expect(await evaluationCell(await createWorkspace())).toMatchObject({ status: "COMPLETED", value: "from the evaluation" });
  });

  it("the playground uses the workspace's key over the Worker's, the Worker's without one, and a 422 naming the Settings page with neither", async () => {
    const own = await createWorkspace();
    await setVar(own, "OPENAI_API_KEY", "workspace-key");
    expect(await json(await playground(own))).toMatchObject({ status: "SUCCESS", output_text: `from the playground${MARK}` });
    const bare = await createWorkspace();
    expect(await json(await playground(bare))).toMatchObject({ status: "SUCCESS", output_text: "from the playground" });
    const res = await playground(bare, "anthropic");
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ error: "provider_not_configured", message: expect.stringContaining(`no ANTHROPIC_API_KEY is set for this workspace: set it on ${SETTINGS}`) });
  });

  it("never sends the Worker's key to a base URL the workspace chose; a workspace key with a refused base URL says why", async () => {
    const w = await createWorkspace();
    // A base URL alone (no workspace key): the Worker's key goes to the Worker's base URL as always.
    await setVar(w, "OPENAI_BASE_URL", "http://fake-endpoint.test/v1");
    expect(await json(await playground(w))).toMatchObject({ status: "SUCCESS", output_text: "from the playground" });
    const p = await createWorkspace();
    await setVar(p, "OPENAI_API_KEY", "workspace-key");
    await setVar(p, "OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
    const c = await columnCell(p, { provider: "openai", model: "gpt-4o-mini" });
    expect(c.status).toBe("FAILED");
    expect(c.error).toMatch(/the workspace variable OPENAI_BASE_URL points at a loopback or private address.*Settings page/);
  });

  it("GET /api/public/v2/provider-keys says where each key comes from, never the key, per workspace", async () => {
    const own = await createWorkspace();
    await setVar(own, "OPENAI_API_KEY", "workspace-key");
    const get = async (ws: TestKey) => {
      const res = await call("/api/public/v2/provider-keys", { key: ws.key });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain("workspace-key");
      expect(text).not.toContain("test-key");
      return Object.fromEntries(JSON.parse(text).providers.map((p: { provider: string; source: string | null }) => [p.provider, p.source]));
    };
    expect(await get(own)).toEqual({ openai: "workspace", anthropic: null });
    expect(await get(await createWorkspace())).toEqual({ openai: "worker", anthropic: null });
    expect((await call("/api/public/v2/provider-keys")).status).toBe(401);
  });
});
