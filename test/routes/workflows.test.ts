import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

const variable = (name: string, value: string, extra: Record<string, unknown> = {}) => ({
  name,
  node_type: "VARIABLE",
  is_output_node: true,
  configuration: { value: { type: "string", value } },
  dependencies: [],
  ...extra,
});
let n = 0;
const uniq = (p: string) => `${p}-${Date.now()}-${++n}`;

let a: TestKey, b: TestKey;
beforeAll(async () => {
  a = await createWorkspace();
  b = await createWorkspace();
});

const create = (key: string, body: Record<string, unknown>) => call("/rest/workflows", { method: "POST", key, json: body });
const patch = (key: string, id: string | number, body: Record<string, unknown>) => call(`/rest/workflows/${encodeURIComponent(String(id))}`, { method: "PATCH", key, json: body });
async function expect400(res: Response, pattern: RegExp) {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(body.error).toBe("validation_error");
  expect(body.message).toMatch(pattern);
}

describe("POST /rest/workflows", () => {
  it("creates a workflow and answers the create response with every field", async () => {
    const name = uniq("greeting");
    const res = await create(a.key, { name, commit_message: "Initial version", nodes: [variable("greeting", "Hello, World!")], release_labels: ["production"] });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toEqual({
      success: true,
      workflow_id: expect.any(Number),
      workflow_name: name,
      workflow_version_id: expect.any(Number),
      version_number: 1,
      base_version: null,
      release_labels: ["production"],
      nodes: [{ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "greeting", node_type: "VARIABLE", is_output_node: true }],
      required_input_variables: {},
      external_ids: [],
    });
  });

  it("adds versions by workflow_name or workflow_id", async () => {
    const name = uniq("versions");
    const first = await json(await create(a.key, { name, nodes: [variable("out", "v1")] }));
    const second = await json(await create(a.key, { workflow_name: name, nodes: [variable("out", "v2")] }));
    const third = await json(await create(a.key, { workflow_id: first.workflow_id, nodes: [variable("out", "v3")] }));
    expect([second.version_number, third.version_number]).toEqual([2, 3]);
    expect(third.workflow_id).toBe(first.workflow_id);
    expect(third.workflow_name).toBe(name);
  });

  it("auto-generates a name when none is given", async () => {
    const body = await json(await create(a.key, { nodes: [variable("out", "x")] }));
    expect(body.workflow_name).toMatch(/^workflow-[0-9a-f]{8}$/);
  });

  it("refuses a name with an id, or an id with a workflow_name", async () => {
    await expect400(await create(a.key, { name: uniq("x"), workflow_id: 1, nodes: [variable("o", "x")] }), /name, workflow_id: give name/);
    await expect400(await create(a.key, { workflow_name: "x", workflow_id: 1, nodes: [variable("o", "x")] }), /workflow_id, workflow_name/);
  });

  it("answers 404 for an unknown workflow, and for another workspace's", async () => {
    const other = await json(await create(b.key, { name: uniq("b-only"), nodes: [variable("o", "x")] }));
    expect((await create(a.key, { workflow_id: other.workflow_id, nodes: [variable("o", "x")] })).status).toBe(404);
    expect((await create(a.key, { workflow_name: other.workflow_name, nodes: [variable("o", "x")] })).status).toBe(404);
    expect((await create(a.key, { workflow_name: uniq("nope"), nodes: [variable("o", "x")] })).status).toBe(404);
  });

  it("answers 409 for a name that exists in the workspace, not for one in another workspace", async () => {
    const name = uniq("dup");
    expect((await create(a.key, { name, nodes: [variable("o", "x")] })).status).toBe(201);
    const res = await create(a.key, { name, nodes: [variable("o", "x")] });
    expect(res.status).toBe(409);
    expect((await json(res)).error).toBe("conflict");
    expect((await create(b.key, { name, nodes: [variable("o", "x")] })).status).toBe(201);
  });

  it("takes names of 1 to 255 characters", async () => {
    expect((await create(a.key, { name: `${uniq("n")}-`.padEnd(255, "x"), nodes: [variable("o", "x")] })).status).toBe(201);
    await expect400(await create(a.key, { name: "x".repeat(256), nodes: [variable("o", "x")] }), /^name: must be 1 to 255/);
    await expect400(await create(a.key, { name: "", nodes: [variable("o", "x")] }), /^name: must be 1 to 255/);
  });

  it("validates the graph with messages that name the node", async () => {
    const base = { name: uniq("bad") };
    await expect400(await create(a.key, { ...base, nodes: [variable("o", "x", { is_output_node: false })] }), /at least one node must have is_output_node = true/);
    await expect400(await create(a.key, { ...base, nodes: [] }), /nodes: must have at least one node/);
    await expect400(await create(a.key, { ...base, nodes: [variable("o", "x"), variable("o", "y")] }), /nodes\[1\] \("o"\)\.name: is used by another node/);
    await expect400(await create(a.key, { ...base, nodes: [variable("o", "x", { dependencies: ["ghost"] })] }), /nodes\[0\] \("o"\)\.dependencies\[0\]: "ghost" is neither a node nor a required input variable/);
    await expect400(
      await create(a.key, { ...base, nodes: [variable("o", "x"), { name: "cmp", node_type: "COMPARE", is_output_node: false, configuration: { sources: ["o"] } }] }),
      /nodes\[1\] \("cmp"\)\.configuration\.sources: must name at least 2 inputs/,
    );
    await expect400(
      await create(a.key, { ...base, nodes: [variable("o", "x"), { name: "j", node_type: "JSON_PATH", is_output_node: false, configuration: { source: "elsewhere", json_path: "$.a" } }] }),
      /nodes\[1\] \("j"\)\.configuration: reads "elsewhere"/,
    );
    await expect400(
      await create(a.key, { ...base, nodes: [{ name: "h", node_type: "HUMAN", is_output_node: true, configuration: {} }] }),
      /nodes\[0\] \("h"\)\.node_type: HUMAN blocks cannot run here: it waits for a person's input/,
    );
    await expect400(await create(a.key, { ...base, nodes: [{ name: "z", node_type: "MAGIC", is_output_node: true, configuration: {} }] }), /unknown block type "MAGIC"/);
    await expect400(await create(a.key, { ...base, nodes: [{ ...variable("o", "x"), name: "" }] }), /nodes\[0\]\.name: must be 1 to 255/);
    await expect400(await create(a.key, { ...base, nodes: [variable("o", "x")], required_input_variables: { o: "string" } }), /is also a required input variable/);
  });

  it("refuses cycles, through dependencies or edges", async () => {
    const cyc = [variable("a", "x", { dependencies: ["b"] }), variable("b", "y", { dependencies: ["a"] }), variable("c", "z")];
    await expect400(await create(a.key, { name: uniq("cyc"), nodes: cyc }), /the graph has a cycle among "a", "b"/);
    const cond = { position: 0, operator: "=", left_config: { static_value: 1 }, right_config: { static_value: 1 } };
    const viaEdges = [variable("a", "x", { dependencies: ["b"] }), variable("b", "y")];
    await expect400(await create(a.key, { name: uniq("cyc"), nodes: viaEdges, edges: [{ source_node_name: "a", target_node_name: "b", is_and: true, conditionals: [cond] }] }), /cycle/);
  });

  it("validates edges and their conditionals", async () => {
    const nodes = [variable("a", "x"), variable("b", "y")];
    const cond = { position: 0, operator: "=", left_config: { source: "a" }, right_config: { static_value: "x" } };
    const edge = (e: Record<string, unknown>) => create(a.key, { name: uniq("edges"), nodes, edges: [{ source_node_name: "a", target_node_name: "b", is_and: true, conditionals: [cond], ...e }] });
    expect((await edge({})).status).toBe(201);
    await expect400(await edge({ target_node_name: "ghost" }), /edges\[0\]\.target_node_name: "ghost" is not a node of this workflow/);
    await expect400(await edge({ conditionals: [] }), /edges\[0\]\.conditionals: must have at least one conditional/);
    await expect400(await edge({ conditionals: [{ ...cond, operator: "~=" }] }), /edges\[0\]\.conditionals\[0\]\.operator: must be one of =, !=/);
    await expect400(await edge({ conditionals: [{ ...cond, left_config: {} }] }), /left_config: needs source or static_value/);
    await expect400(await edge({ conditionals: [{ ...cond, left_config: { source: "nope" } }] }), /left_config\.source: "nope" is neither/);
    expect((await edge({ conditionals: [{ position: 0, operator: "is_null", left_config: { source: "a" }, right_config: {} }] })).status).toBe(201);
  });

  it("places a workflow in a folder of the workspace; another workspace's folder is 404", async () => {
    const folder = await json(await call("/api/public/v2/folders", { method: "POST", key: a.key, json: { name: uniq("wf-folder") } }));
    const foreign = await json(await call("/api/public/v2/folders", { method: "POST", key: b.key, json: { name: uniq("wf-folder") } }));
    const name = uniq("foldered");
    expect((await create(a.key, { name, folder_id: folder.folder.id, nodes: [variable("o", "x")] })).status).toBe(201);
    const listed = await json(await call(`/workflows?per_page=100`, { key: a.key }));
    expect(listed.items.find((i: any) => i.name === name).folder_id).toBe(folder.folder.id);
    expect((await create(a.key, { name: uniq("f"), folder_id: foreign.folder.id, nodes: [variable("o", "x")] })).status).toBe(404);
    expect((await create(a.key, { name: uniq("f"), folder_id: 99999999, nodes: [variable("o", "x")] })).status).toBe(404);
  });

  it("attaches external IDs on create, looks workflows up by them, and refuses one already on another workflow", async () => {
    const ext = { source: "crm", external_id: uniq("wf") };
    const first = await json(await create(a.key, { name: uniq("ext"), external_ids: [ext, ext], nodes: [variable("o", "x")] }));
    expect(first.external_ids).toEqual([ext]);
    const res = await create(a.key, { name: uniq("ext"), external_ids: [ext], nodes: [variable("o", "x")] });
    expect(res.status).toBe(409);
    expect((await create(b.key, { name: uniq("ext"), external_ids: [ext], nodes: [variable("o", "x")] })).status).toBe(201);
    const again = await json(await create(a.key, { workflow_id: first.workflow_id, external_ids: [ext], nodes: [variable("o", "y")] }));
    expect(again.external_ids).toEqual([ext]);
    const found = await json(await call(`/workflows?external_source=crm&external_id=${encodeURIComponent(ext.external_id)}`, { key: a.key }));
    expect(found.items.map((i: any) => i.id)).toEqual([first.workflow_id]);
    expect(found.items[0].external_ids).toEqual([ext]);
    const none = await json(await call(`/workflows?external_source=crm&external_id=nothing-${Date.now()}`, { key: a.key }));
    expect(none).toMatchObject({ items: [], total: 0 });
    expect((await json(await call(`/workflows/${first.workflow_id}`, { key: a.key }))).external_ids).toEqual([ext]);
    const attached = await call(`/workflows/${first.workflow_id}/external-ids`, { method: "POST", key: a.key, json: { source: "erp", external_id: "7" } });
    expect(attached.status).toBe(201);
    expect((await json(await call(`/workflows/${first.workflow_id}/external-ids`, { key: a.key }))).external_ids).toEqual([ext, { source: "erp", external_id: "7" }]);
    expect((await call(`/workflows/${first.workflow_id}/external-ids`, { key: b.key })).status).toBe(404);
  });
});

describe("release labels and GET /workflows/{id_or_name}", () => {
  it("a label names one version; giving it to another version moves it", async () => {
    const name = uniq("labels");
    const v1 = await json(await create(a.key, { name, nodes: [variable("o", "one")], release_labels: ["production", "staging"] }));
    const v2 = await json(await create(a.key, { workflow_name: name, nodes: [variable("o", "two")], release_labels: ["production"] }));
    const labels = await json(await call(`/workflows/${name}/labels`, { key: a.key }));
    expect(labels).toEqual({
      success: true,
      release_labels: [
        { release_label: "production", release_label_id: expect.any(Number), workflow_version_id: v2.workflow_version_id, workflow_version_number: 2 },
        { release_label: "staging", release_label_id: expect.any(Number), workflow_version_id: v1.workflow_version_id, workflow_version_number: 1 },
      ],
    });
    const prod = await json(await call(`/workflows/${name}?label=production`, { key: a.key }));
    expect(prod).toMatchObject({ workflow_name: name, version: 2, workflow_version_id: v2.workflow_version_id, release_labels: ["production"] });
    expect(prod.nodes[0]).toMatchObject({ name: "o", workflow_version_id: v2.workflow_version_id, configuration: { value: { type: "string", value: "two" } }, dependencies: [] });
    const first = await json(await call(`/workflows/${v1.workflow_id}?version=1`, { key: a.key }));
    expect(first).toMatchObject({ version: 1, release_labels: ["staging"], edges: [], required_input_variables: {}, commit_message: null });
    expect((await json(await call(`/workflows/${name}`, { key: a.key }))).version).toBe(2);
    // The workflow itself, as the Python SDK's run_workflow reads it, beside the version's fields.
    expect(prod.workflow).toEqual({ id: v1.workflow_id, workspace_id: a.workspaceId, user_id: a.userId, name, is_draft: false, is_deleted: false });
    expect(prod.workflow_id).toBe(v1.workflow_id);
  });

  it("answers 400 for version and label together, 404 for an unknown version or label or another workspace's workflow", async () => {
    const name = uniq("get");
    const wf = await json(await create(a.key, { name, nodes: [variable("o", "x")] }));
    await expect400(await call(`/workflows/${name}?version=1&label=x`, { key: a.key }), /version, label/);
    await expect400(await call(`/workflows/${name}?version=0`, { key: a.key }), /version: must be a positive integer/);
    expect((await call(`/workflows/${name}?version=9`, { key: a.key })).status).toBe(404);
    expect((await call(`/workflows/${name}?label=nope`, { key: a.key })).status).toBe(404);
    expect((await call(`/workflows/${name}`, { key: b.key })).status).toBe(404);
    expect((await call(`/workflows/${wf.workflow_id}`, { key: b.key })).status).toBe(404);
    expect((await call(`/workflows/${wf.workflow_id}/labels`, { key: b.key })).status).toBe(404);
  });
});

describe("PATCH /rest/workflows/{id_or_name}", () => {
  const base = () => ({
    nodes: [
      variable("input_copy", "x", { is_output_node: false }),
      { name: "check", node_type: "CONTAINS", is_output_node: true, configuration: { source: "input_copy", value: "x" }, dependencies: ["input_copy"] },
      variable("old", "bye", { is_output_node: false }),
    ],
    edges: [{ source_node_name: "old", target_node_name: "check", is_and: true, conditionals: [{ position: 0, operator: "is_not_null", left_config: { source: "old" }, right_config: {} }] }],
    required_input_variables: { q: "string" },
  });

  it("merges configuration, replaces dependencies, removes nodes with their edges, and reports base_version", async () => {
    const name = uniq("patch");
    const v1 = await json(await create(a.key, { name, ...base() }));
    const res = await patch(a.key, name, {
      commit_message: "tweak",
      nodes: {
        check: { configuration: { value: null, value_source: "q" }, dependencies: [] },
        old: null,
        extra: { node_type: "COUNT", configuration: { source: "q", type: "words" } },
      },
      release_labels: ["prod"],
    });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toMatchObject({ workflow_id: v1.workflow_id, version_number: 2, base_version: 1, release_labels: ["prod"], required_input_variables: { q: "string" } });
    expect(body.nodes.map((x: any) => x.name)).toEqual(["input_copy", "check", "extra"]);
    const v2 = await json(await call(`/workflows/${name}?version=2`, { key: a.key }));
    expect(v2.nodes.find((x: any) => x.name === "check")).toMatchObject({ configuration: { source: "input_copy", value_source: "q" }, dependencies: [], is_output_node: true });
    expect(v2.nodes.find((x: any) => x.name === "extra")).toMatchObject({ is_output_node: false, dependencies: [] });
    expect(v2.edges).toEqual([]);
    expect(v2.commit_message).toBe("tweak");
  });

  it("branches from base_version and replaces edges and input variables when given", async () => {
    const name = uniq("branch");
    const v1 = await json(await create(a.key, { name, ...base() }));
    await patch(a.key, v1.workflow_id, { nodes: { old: null } });
    const res = await patch(a.key, v1.workflow_id, { base_version: 1, required_input_variables: { q: "string", r: "string" }, edges: [] });
    const body = await json(res);
    expect(body).toMatchObject({ version_number: 3, base_version: 1, required_input_variables: { q: "string", r: "string" } });
    const v3 = await json(await call(`/workflows/${name}?version=3`, { key: a.key }));
    expect(v3.nodes.map((x: any) => x.name)).toEqual(["input_copy", "check", "old"]);
    expect(v3.edges).toEqual([]);
  });

  it("validates the merged graph and the changes", async () => {
    const name = uniq("patch-bad");
    await create(a.key, { name, ...base() });
    await expect400(await patch(a.key, name, { nodes: { ghost: null } }), /nodes\.ghost: is not a node of the base version/);
    await expect400(await patch(a.key, name, { nodes: { fresh: { configuration: {} } } }), /nodes\.fresh\.node_type: is required for a new node/);
    await expect400(await patch(a.key, name, { nodes: { check: { configuration: { source: null } } } }), /\("check"\)\.configuration\.source/);
    await expect400(await patch(a.key, name, { nodes: { check: { is_output_node: false } } }), /at least one node must have is_output_node/);
    await expect400(await patch(a.key, name, { nodes: { check: { configuration: { value: null, value_source: "q" } } }, required_input_variables: {} }), /\("check"\)\.configuration: reads "q"/);
    expect((await patch(a.key, name, { base_version: 7 })).status).toBe(404);
    expect((await patch(b.key, name, {})).status).toBe(404);
    expect((await json(await call(`/workflows/${name}`, { key: a.key }))).version).toBe(1);
  });
});

describe("GET /workflows", () => {
  it("pages through the workspace's workflows only, with labels and latest versions", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    for (const nm of ["alpha", "beta", "gamma"]) await create(ws.key, { name: nm, nodes: [variable("o", nm)], release_labels: nm === "beta" ? ["prod"] : [] });
    await create(ws.key, { workflow_name: "alpha", nodes: [variable("o", "again")] });
    await create(other.key, { name: "delta", nodes: [variable("o", "d")] });
    const page1 = await json(await call("/workflows?per_page=2&sort_by=name&sort_order=asc", { key: ws.key }));
    expect(page1).toMatchObject({ page: 1, per_page: 2, total: 3, pages: 2, has_next: true, has_prev: false, next_num: 2, prev_num: null });
    expect(page1.items.map((i: any) => i.name)).toEqual(["alpha", "beta"]);
    expect(page1.items[0]).toMatchObject({ workspace_id: ws.workspaceId, user_id: ws.userId, is_deleted: false, latest_version_number: 2, release_labels: [], external_ids: [] });
    expect(page1.items[1].release_labels).toEqual(["prod"]);
    const page2 = await json(await call("/workflows?per_page=2&page=2&sort_by=name&sort_order=asc", { key: ws.key }));
    expect(page2.items.map((i: any) => i.name)).toEqual(["gamma"]);
    expect(page2).toMatchObject({ has_next: false, has_prev: true, prev_num: 1 });
    const byEmail = await json(await call(`/workflows?created_by_email=${encodeURIComponent(other.email)}`, { key: ws.key }));
    expect(byEmail.items).toEqual([]);
  });

  it("checks its query: per_page 1..100, known sort fields, timestamps, both halves of an external-ID lookup", async () => {
    expect((await call("/workflows?per_page=100", { key: a.key })).status).toBe(200);
    await expect400(await call("/workflows?per_page=101", { key: a.key }), /per_page: must be 1 to 100/);
    await expect400(await call("/workflows?per_page=0", { key: a.key }), /per_page/);
    await expect400(await call("/workflows?sort_by=size", { key: a.key }), /sort_by/);
    await expect400(await call("/workflows?created_after=yesterday", { key: a.key }), /created_after/);
    await expect400(await call("/workflows?external_source=crm", { key: a.key }), /external_id: is required with external_source/);
    expect((await call("/workflows")).status).toBe(401);
  });
});

async function waitForResults(key: string, id: number, all = false) {
  for (let i = 0; i < 100; i++) {
    const res = await call(`/workflow-version-execution-results?workflow_version_execution_id=${id}${all ? "&return_all_outputs=true" : ""}`, { key });
    if (res.status === 200) return json(res);
    expect(res.status).toBe(202);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the run did not finish");
}

describe("runs", () => {
  const cond = (value: string) => ({ position: 0, operator: "=", left_config: { source: "classify" }, right_config: { static_value: value } });
  const graph = {
    required_input_variables: { user_message: "string" },
    nodes: [
      {
        name: "classify",
        node_type: "PROMPT_TEMPLATE",
        is_output_node: false,
        configuration: { template: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "Classify: {user_message}" }] }] } } },
        dependencies: ["user_message"],
      },
      variable("billing", "Billing team will help", { dependencies: ["classify"] }),
      { name: "tech", node_type: "ENDPOINT", is_output_node: true, configuration: { url: "https://fake-endpoint.test/tickets" }, dependencies: ["classify", "user_message"] },
      { name: "length", node_type: "COUNT", is_output_node: false, configuration: { source: "billing", type: "words" } },
    ],
    edges: [
      { source_node_name: "classify", target_node_name: "billing", is_and: true, conditionals: [cond("billing")] },
      { source_node_name: "classify", target_node_name: "tech", is_and: true, conditionals: [cond("tech")] },
    ],
  };
  const run = (key: string, name: string, body: Record<string, unknown>) => call(`/workflows/${encodeURIComponent(name)}/run`, { method: "POST", key, json: body });

  it("runs a graph with a conditional branch end to end through the queue", async () => {
    const name = uniq("router");
    expect((await create(a.key, { name, ...graph, release_labels: ["prod"] })).status).toBe(201);

    const started = await run(a.key, name, { input_variables: { user_message: "[[reply:billing]]" }, metadata: { env: "test" } });
    expect(started.status).toBe(201);
    const s1 = await json(started);
    expect(s1).toEqual({ success: true, message: "Workflow execution started", warning: null, workflow_version_execution_id: expect.any(Number) });
    expect(await waitForResults(a.key, s1.workflow_version_execution_id)).toBe("Billing team will help");
    const all = await waitForResults(a.key, s1.workflow_version_execution_id, true);
    expect(all).toEqual({
      classify: { status: "SUCCESS", value: "billing", error_message: null, raw_error_message: null, is_output_node: false },
      billing: { status: "SUCCESS", value: "Billing team will help", error_message: null, raw_error_message: null, is_output_node: true },
      tech: { status: "SKIPPED", value: null, error_message: null, raw_error_message: null, is_output_node: true },
      length: { status: "SUCCESS", value: 4, error_message: null, raw_error_message: null, is_output_node: false },
    });

    const s2 = await json(await run(a.key, name, { workflow_label_name: "prod", input_variables: { user_message: "[[reply:tech]]", extra: 1 } }));
    expect(s2.warning).toBe("input variables not used by the workflow: extra");
    const all2 = await waitForResults(a.key, s2.workflow_version_execution_id, true);
    expect(all2.billing.status).toBe("SKIPPED");
    expect(all2.length.status).toBe("SKIPPED");
    expect(all2.tech).toMatchObject({ status: "SUCCESS", value: { method: "POST", path: "/tickets", received: { classify: "tech", user_message: "[[reply:tech]]" } } });
    expect(await waitForResults(a.key, s2.workflow_version_execution_id)).toEqual(all2.tech.value);
  });

  it("records a failing node's error and fails what depends on it", async () => {
    const name = uniq("failing");
    await create(a.key, {
      name,
      required_input_variables: { doc: "string" },
      nodes: [
        { name: "parse", node_type: "JSON_PATH", is_output_node: false, configuration: { source: "doc", json_path: "$.a" } },
        { name: "double", node_type: "MATH_OPERATOR", is_output_node: true, configuration: { sources: ["parse"], operator: "gt", value: 1 } },
      ],
    });
    const s = await json(await run(a.key, name, { input_variables: { doc: "not json" } }));
    const results = await waitForResults(a.key, s.workflow_version_execution_id);
    expect(results).toEqual({ double: { status: "FAILED", value: null, error_message: 'dependency "parse" failed', raw_error_message: 'dependency "parse" failed', is_output_node: true } });
    const all = await waitForResults(a.key, s.workflow_version_execution_id, true);
    expect(all.parse).toMatchObject({ status: "FAILED", error_message: 'doc is not valid JSON: "not json"' });
  });

  it("refuses missing input variables, version and label together, callbacks; 404 for unknown or foreign", async () => {
    const name = uniq("run-checks");
    await create(a.key, { name, ...graph });
    await expect400(await run(a.key, name, { input_variables: {} }), /^input_variables: missing required input variables: user_message/);
    await expect400(await run(a.key, name, { workflow_label_name: "x", workflow_version_number: 1, input_variables: { user_message: "m" } }), /workflow_label_name, workflow_version_number/);
    await expect400(await run(a.key, name, { callback_url: "https://example.com/cb", input_variables: { user_message: "m" } }), /^callback_url/);
    expect((await run(a.key, name, { workflow_label_name: "nope", input_variables: { user_message: "m" } })).status).toBe(404);
    expect((await run(a.key, name, { workflow_version_number: 5, input_variables: { user_message: "m" } })).status).toBe(404);
    expect((await run(b.key, name, { input_variables: { user_message: "m" } })).status).toBe(404);
  });

  it("answers 202 while a run is going, and 404 for another workspace's execution", async () => {
    const name = uniq("pending");
    const wf = await json(await create(a.key, { name, nodes: [variable("o", "x")] }));
    const exec = await env.DB.prepare("INSERT INTO workflow_executions (workspace_id, workflow_id, workflow_version_id, input_variables) VALUES (?, ?, ?, '{}') RETURNING id")
      .bind(a.workspaceId, wf.workflow_id, wf.workflow_version_id)
      .first<{ id: number }>();
    await env.DB.prepare("INSERT INTO workflow_execution_nodes (execution_id, node_name, is_output_node) VALUES (?, 'o', 1)").bind(exec!.id).run();
    const res = await call(`/workflow-version-execution-results?workflow_version_execution_id=${exec!.id}`, { key: a.key });
    expect(res.status).toBe(202);
    expect(await json(res)).toEqual({ o: { status: "QUEUED", value: null, error_message: null, raw_error_message: null, is_output_node: true } });
    expect((await call(`/workflow-version-execution-results?workflow_version_execution_id=${exec!.id}`, { key: b.key })).status).toBe(404);
    await expect400(await call(`/workflow-version-execution-results?workflow_version_execution_id=abc`, { key: a.key }), /workflow_version_execution_id/);
    await expect400(await call(`/workflow-version-execution-results`, { key: a.key }), /workflow_version_execution_id/);
  });
});

/** A WebSocket to the realtime hub, through the Worker's entrypoint; messages are queued as they come. */
async function socket() {
  const res = await call("/connection/websocket", { headers: { Upgrade: "websocket" } });
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  const inbox: any[] = [];
  const waiters: (() => void)[] = [];
  ws.addEventListener("message", (e) => {
    inbox.push(JSON.parse(String(e.data)));
    waiters.splice(0).forEach((w) => w());
  });
  ws.accept();
  let id = 0;
  const next = async (timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (inbox.length === 0) {
      if (Date.now() > deadline) throw new Error("no message");
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 100);
      });
    }
    return inbox.shift();
  };
  const command = async (body: Record<string, unknown>) => {
    ws.send(JSON.stringify({ id: ++id, ...body }));
    return next();
  };
  return { ws, inbox, next, command };
}

const token = (key: string, capability: string) => call(`/ws-token-request-library?capability=${encodeURIComponent(capability)}`, { method: "POST", key });

describe("the realtime channels of runs", () => {
  const suffix = () => crypto.randomUUID().replace(/-/g, "");

  it("tokens: 201 for a run's channel or a workflow's run channel of the workspace; 404 for another workspace's or none; 400 for other capabilities", async () => {
    const wf = await json(await create(a.key, { name: uniq("tokens"), nodes: [variable("o", "x")] }));
    const mine = await token(a.key, `workflows:${wf.workflow_id}:run:${suffix()}`);
    expect(mine.status).toBe(201);
    expect(await json(mine)).toMatchObject({ success: true, messaging_backend: "centrifugo", token_details: { token: expect.any(String), expires_at: expect.any(String) } });
    expect((await token(b.key, `workflows:${wf.workflow_id}:run:${suffix()}`)).status).toBe(404);
    expect((await token(a.key, `workflows:99999999:run:${suffix()}`)).status).toBe(404);
    const exec = await json(await call(`/workflows/${wf.workflow_id}/run`, { method: "POST", key: a.key, json: { input_variables: {} } }));
    expect((await token(a.key, `workflow_updates:${exec.workflow_version_execution_id}`)).status).toBe(201);
    expect((await token(b.key, `workflow_updates:${exec.workflow_version_execution_id}`)).status).toBe(404);
    for (const bad of [`workflows:${wf.workflow_id}:run:`, `workflows:${wf.workflow_id}:run:a b`, `workflows:${wf.workflow_id}:run:${"a".repeat(65)}`, `workflows:${wf.workflow_id}`, "other:1"]) {
      await expect400(await token(a.key, bad), /^capability: must be workflow_updates:<execution id> or workflows:<workflow id>:run:<suffix>/);
    }
  });

  it("a bad channel_name_suffix is a 400 and starts no run", async () => {
    const wf = await json(await create(a.key, { name: uniq("suffix"), nodes: [variable("o", "x")] }));
    const runs = () => env.DB.prepare("SELECT count(*) AS n FROM workflow_executions WHERE workflow_id = ?").bind(wf.workflow_id).first<{ n: number }>();
    for (const bad of ["", "a b", "a".repeat(65), 42]) {
      await expect400(await call(`/workflows/${wf.workflow_id}/run`, { method: "POST", key: a.key, json: { input_variables: {}, channel_name_suffix: bad } }), /^channel_name_suffix: /);
    }
    expect((await runs())!.n).toBe(0);
  });

  it("a run started with channel_name_suffix ends on that channel with its outputs as asked, and on its execution's channel; late subscribers are told at once", async () => {
    const wf = await json(await create(a.key, { name: uniq("channel"), nodes: [variable("greeting", "Hello, channel!")] }));
    const s = suffix();
    const channel = `workflows:${wf.workflow_id}:run:${s}`;
    const t = (await json(await token(a.key, channel))).token_details.token;
    const client = await socket();
    expect(await client.command({ connect: { token: t } })).toMatchObject({ connect: { client: expect.any(String) } });
    // Only the token's channel.
    expect(await client.command({ subscribe: { channel: `workflows:${wf.workflow_id}:run:${suffix()}` } })).toMatchObject({ error: { code: 103 } });
    expect(await client.command({ subscribe: { channel } })).toMatchObject({ subscribe: {} });
    const started = await json(await call(`/workflows/${wf.workflow_name}/run`, { method: "POST", key: a.key, json: { input_variables: {}, return_all_outputs: true, channel_name_suffix: s } }));
    const pushed = await client.next(30_000);
    expect(pushed.push.channel).toBe(channel);
    expect(pushed.push.pub.data.message_name).toBe("SET_WORKFLOW_COMPLETE");
    expect(JSON.parse(pushed.push.pub.data.data)).toEqual({
      workflow_version_execution_id: started.workflow_version_execution_id,
      result_code: "OK",
      final_output: { greeting: { status: "SUCCESS", value: "Hello, channel!", error_message: null, raw_error_message: null, is_output_node: true } },
    });
    client.ws.close();
    // Subscribing after the end: the same message at once, on either channel of the run.
    for (const ch of [channel, `workflow_updates:${started.workflow_version_execution_id}`]) {
      const late = await socket();
      await late.command({ connect: { token: (await json(await token(a.key, ch))).token_details.token } });
      expect(await late.command({ subscribe: { channel: ch } })).toMatchObject({ subscribe: {} });
      expect(JSON.parse((await late.next()).push.pub.data.data)).toMatchObject({ workflow_version_execution_id: started.workflow_version_execution_id, result_code: "OK" });
      late.ws.close();
    }
  });

  it("the main output when return_all_outputs is off; over the size limit, EXCEEDS_SIZE_LIMIT and no outputs", async () => {
    const small = await json(await create(a.key, { name: uniq("main"), nodes: [variable("o", "just this")] }));
    const big = await json(await create(a.key, { name: uniq("big"), nodes: [variable("o", "x".repeat(70_000))] }));
    for (const [wf, expected] of [
      [small, { result_code: "OK", final_output: "just this" }],
      [big, { result_code: "EXCEEDS_SIZE_LIMIT", final_output: null }],
    ] as const) {
      const s = suffix();
      const channel = `workflows:${wf.workflow_id}:run:${s}`;
      const client = await socket();
      await client.command({ connect: { token: (await json(await token(a.key, channel))).token_details.token } });
      await client.command({ subscribe: { channel } });
      const started = await json(await call(`/workflows/${wf.workflow_id}/run`, { method: "POST", key: a.key, json: { input_variables: {}, channel_name_suffix: s } }));
      expect(JSON.parse((await client.next(30_000)).push.pub.data.data)).toEqual({ workflow_version_execution_id: started.workflow_version_execution_id, ...expected });
      client.ws.close();
    }
  });
});
