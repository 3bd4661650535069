// Environment variables of the workspace and of a tool: secrets stored encrypted, shown by suffix only.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { envForRun } from "../../src/services/workspace/env-vars";
import { getDb } from "../../src/db/client";

let ws: TestKey;
let other: TestKey;
let toolId: number;
let toolName: string;
beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  toolName = `tool-${crypto.randomUUID().slice(0, 8)}`;
  const res = await call("/api/public/v2/tool-registry", { method: "POST", key: ws.key, json: { name: toolName, tool_definition: { type: "function", function: { name: "t" } } } });
  toolId = (await json(res)).tool_registry.id;
});

const post = (path: string, key: string, body: unknown) => call(path, { method: "POST", key, json: body });

describe("workspace environment variables", () => {
  it("creates, lists by suffix only, updates and deletes; the value is stored encrypted", async () => {
    const res = await post("/api/public/v2/env-vars", ws.key, { key: "OPENAI_KEY", value: "sk-very-secret-1234" });
    expect(res.status).toBe(201);
    const created = (await json(res)).workspace_env_var;
    expect(created).toMatchObject({ key: "OPENAI_KEY", value_suffix: "1234", is_empty: false, workspace_id: ws.workspaceId });
    expect(JSON.stringify(created)).not.toContain("very-secret");
    const stored = await env.DB.prepare("SELECT sealed_value FROM env_vars WHERE id = ?").bind(created.id).first<{ sealed_value: string }>();
    expect(stored!.sealed_value).toMatch(/^v1:/);
    expect(stored!.sealed_value).not.toContain("very-secret");

    const list = await json(await call("/api/public/v2/env-vars", { key: ws.key }));
    expect(list).toEqual({ success: true, workspace_env_vars: [created] });
    expect(JSON.stringify(list)).not.toContain("very-secret");

    const upd = await call(`/api/public/v2/env-vars/${created.id}`, { method: "PATCH", key: ws.key, json: { value: "new-value-9876" } });
    expect(upd.status).toBe(200);
    expect((await json(upd)).workspace_env_var).toMatchObject({ id: created.id, value_suffix: "9876" });
    expect(await envForRun(getDb(env.DB), env.ENV_VARS_KEY, ws.workspaceId)).toEqual({ OPENAI_KEY: "new-value-9876" });

    const del = await call(`/api/public/v2/env-vars/${created.id}`, { method: "DELETE", key: ws.key });
    expect(await json(del)).toEqual({ success: true });
    expect((await call(`/api/public/v2/env-vars/${created.id}`, { method: "DELETE", key: ws.key })).status).toBe(404);
  });

  it("takes placeholders without a value; a key is unique in its scope (409)", async () => {
    const res = await post("/api/public/v2/env-vars", ws.key, { key: "LATER" });
    expect((await json(res)).workspace_env_var).toMatchObject({ key: "LATER", value_suffix: null, is_empty: true });
    expect((await post("/api/public/v2/env-vars", ws.key, { key: "LATER", value: "x" })).status).toBe(409);
    expect((await post("/api/public/v2/env-vars", other.key, { key: "LATER", value: "x" })).status).toBe(201);
    expect(await envForRun(getDb(env.DB), env.ENV_VARS_KEY, ws.workspaceId)).not.toHaveProperty("LATER");
  });

  it("validates key and value on both sides of their limits", async () => {
    for (const key of ["", "1ABC", "A-B", "A B", "K".repeat(256)]) {
      expect((await post("/api/public/v2/env-vars", ws.key, { key, value: "v" })).status, key).toBe(400);
    }
    expect((await post("/api/public/v2/env-vars", ws.key, { key: "_" + "K".repeat(254), value: "v" })).status).toBe(201);
    expect((await post("/api/public/v2/env-vars", ws.key, { key: "BIG_OK", value: "v".repeat(8192) })).status).toBe(201);
    const big = await post("/api/public/v2/env-vars", ws.key, { key: "BIG_NO", value: "v".repeat(8193) });
    expect(big.status).toBe(400);
    expect((await json(big)).message).toMatch(/value: must be at most 8192 characters/);
    const id = (await json(await post("/api/public/v2/env-vars", ws.key, { key: "EMPTY_PATCH", value: "a" }))).workspace_env_var.id;
    expect((await call(`/api/public/v2/env-vars/${id}`, { method: "PATCH", key: ws.key, json: { value: "" } })).status).toBe(400);
    expect((await call(`/api/public/v2/env-vars/${id}`, { method: "PATCH", key: ws.key, json: {} })).status).toBe(400);
  });

  it("another workspace's variable is a 404 and is left as it was", async () => {
    const theirs = (await json(await post("/api/public/v2/env-vars", other.key, { key: "THEIRS", value: "their-secret" }))).workspace_env_var;
    expect((await call(`/api/public/v2/env-vars/${theirs.id}`, { method: "PATCH", key: ws.key, json: { value: "mine" } })).status).toBe(404);
    expect((await call(`/api/public/v2/env-vars/${theirs.id}`, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect((await json(await call("/api/public/v2/env-vars", { key: ws.key }))).workspace_env_vars.map((v: any) => v.key)).not.toContain("THEIRS");
    expect(await envForRun(getDb(env.DB), env.ENV_VARS_KEY, other.workspaceId)).toMatchObject({ THEIRS: "their-secret" });
  });
});

describe("what a variable shows of its value", () => {
  it("no suffix for a value under 12 characters, the last four from 12 on; nothing of the value stored in plain text", async () => {
    for (const [value, suffix] of [["short-12345", null], ["exactly-12ch", "12ch"], ["é".repeat(11), null], ["é".repeat(11) + "z", "éééz"]] as const) {
      const key = `S_${crypto.randomUUID().replace(/-/g, "")}`;
      const created = (await json(await post("/api/public/v2/env-vars", ws.key, { key, value }))).workspace_env_var;
      expect(created, value).toMatchObject({ value_suffix: suffix, is_empty: false });
      const listed = (await json(await call("/api/public/v2/env-vars", { key: ws.key }))).workspace_env_vars.find((x: any) => x.key === key);
      expect(listed.value_suffix, value).toBe(suffix);
      const row = await env.DB.prepare("SELECT * FROM env_vars WHERE id = ?").bind(created.id).first<Record<string, unknown>>();
      expect(Object.keys(row!)).not.toContain("value_suffix");
      expect(String(row!.sealed_value)).not.toContain(value.slice(-4));
    }
  });

  it("the upgrade keeps every variable: placeholders stay placeholders, values stay sealed, the plain suffix column goes", async () => {
    // The migrations' own statements, run on a copy of the table as 0016 made it, holding rows written before them.
    const table = `env_vars_upgrade_${crypto.randomUUID().slice(0, 8)}`;
    const stmts = (name: string) =>
      env.TEST_MIGRATIONS.find((m) => m.name.startsWith(name))!.queries.filter((q) => q.includes("`env_vars`")).map((q) => q.replaceAll("`env_vars`", `\`${table}\``).replace("`env_vars_scope_key`", `\`${table}_key\``));
    for (const q of stmts("0016")) await env.DB.prepare(q).run();
    await env.DB.prepare(`INSERT INTO ${table} (workspace_id, key, sealed_value, value_suffix) VALUES (?, 'A', 'v1:sealed-a', 'a123'), (?, 'EMPTY', 'v1:sealed-empty', NULL)`)
      .bind(ws.workspaceId, ws.workspaceId)
      .run();
    for (const q of [...stmts("0035"), ...stmts("0036")]) await env.DB.prepare(q).run();
    const rows = (await env.DB.prepare(`SELECT * FROM ${table} ORDER BY key`).all()).results;
    expect(rows.map((r) => ({ key: r.key, sealed_value: r.sealed_value, has_value: r.has_value }))).toEqual([
      { key: "A", sealed_value: "v1:sealed-a", has_value: 1 },
      { key: "EMPTY", sealed_value: "v1:sealed-empty", has_value: 0 },
    ]);
    expect(Object.keys(rows[0])).not.toContain("value_suffix");
    await env.DB.prepare(`DROP TABLE ${table}`).run();
  });
});

describe("tool environment variables", () => {
  it("live under the tool (by id or name), apart from the workspace's, and win over them at run time", async () => {
    await post("/api/public/v2/env-vars", ws.key, { key: "SHARED", value: "from-workspace" });
    const res = await post(`/api/public/v2/tool-registry/${toolName}/env-vars`, ws.key, { key: "SHARED", value: "from-tool-value" });
    expect(res.status).toBe(201);
    const v = (await json(res)).tool_env_var;
    expect(v).toMatchObject({ key: "SHARED", value_suffix: "alue", tool_registry_id: toolId });
    expect(v).not.toHaveProperty("workspace_id");
    const list = await json(await call(`/api/public/v2/tool-registry/${toolId}/env-vars`, { key: ws.key }));
    expect(list.tool_env_vars.map((x: any) => x.key)).toEqual(["SHARED"]);
    const run = await envForRun(getDb(env.DB), env.ENV_VARS_KEY, ws.workspaceId, toolId);
    expect(run.SHARED).toBe("from-tool-value");
    expect((await envForRun(getDb(env.DB), env.ENV_VARS_KEY, ws.workspaceId)).SHARED).toBe("from-workspace");

    const upd = await call(`/api/public/v2/tool-registry/${toolId}/env-vars/${v.id}`, { method: "PATCH", key: ws.key, json: { value: "tool-value-2" } });
    expect((await json(upd)).tool_env_var.value_suffix).toBe("ue-2");
    // The tool's variable is not reachable through the workspace routes, nor through another tool.
    expect((await call(`/api/public/v2/env-vars/${v.id}`, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect((await call(`/api/public/v2/tool-registry/${toolId}/env-vars/${v.id}`, { method: "DELETE", key: ws.key })).status).toBe(200);
  });

  it("an unknown or foreign tool is a 404", async () => {
    expect((await call("/api/public/v2/tool-registry/no-such-tool/env-vars", { key: ws.key })).status).toBe(404);
    expect((await call(`/api/public/v2/tool-registry/${toolId}/env-vars`, { key: other.key })).status).toBe(404);
    expect((await post(`/api/public/v2/tool-registry/${toolId}/env-vars`, other.key, { key: "X", value: "y" })).status).toBe(404);
  });
});
