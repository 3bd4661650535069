// The audit log (one test per recorded action), API keys through the API, and the admin rule for
// provider base URLs (issue 42 item 1): a key without admin cannot point the stored provider key elsewhere.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, scopedKey, type TestKey } from "../helpers/api";

let ws: TestKey;
let other: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

const chat = (text: string) => ({ type: "chat", messages: [{ role: "user", content: [{ type: "text", text }] }] });
const model = { model: { provider: "openai", name: "gpt-4o", parameters: {} } };

/** The workspace's audit entries of one action, newest first. */
async function entries(key: string, action: string, extra = "") {
  const res = await call(`/api/public/v2/audit-log?action=${action}&per_page=100${extra}`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).items as Record<string, any>[];
}

describe("API keys through the API", () => {
  it("admin makes a key with a name and scopes (shown once), lists keys without secrets, revokes one; each is in the audit log with who did it", async () => {
    const made = await call("/api/public/v2/api-keys", { method: "POST", key: ws.key, json: { name: "dashboard", scopes: ["read"] } });
    expect(made.status).toBe(201);
    const { api_key, key } = await json(made);
    expect(key).toMatch(/^pe_[0-9a-f]{48}$/);
    expect(api_key).toMatchObject({ name: "dashboard", scopes: ["read"], prefix: key.slice(0, 11), revoked_at: null, user_email: ws.email });
    const stored = await env.DB.prepare("SELECT key_hash FROM api_keys WHERE id = ?").bind(api_key.id).first<{ key_hash: string }>();
    expect(stored!.key_hash).not.toContain(key);

    // The new key works, within its scopes.
    expect((await call("/prompt-templates", { key })).status).toBe(200);
    expect((await call("/rest/prompt-templates", { method: "POST", key, json: {} })).status).toBe(403);

    const listed = await json(await call("/api/public/v2/api-keys", { key: ws.key }));
    const text = JSON.stringify(listed);
    expect(text).not.toContain(key);
    expect(text).not.toContain(stored!.key_hash);
    expect(listed.api_keys.map((k: { id: number }) => k.id)).toContain(api_key.id);
    // Keys made before scopes (the CLI's) are admin.
    expect(listed.api_keys[0]).toMatchObject({ scopes: ["admin"], name: null });

    const created = (await entries(ws.key, "api_key.created")).find((e) => e.target_id === String(api_key.id));
    expect(created).toMatchObject({ target_type: "api_key", details: { name: "dashboard", scopes: ["read"], prefix: key.slice(0, 11) }, user_email: ws.email, api_key_prefix: ws.key.slice(0, 11) });
    expect(JSON.stringify(created)).not.toContain(key);

    const revoked = await call(`/api/public/v2/api-keys/${api_key.id}`, { method: "DELETE", key: ws.key });
    expect(revoked.status).toBe(200);
    expect((await json(revoked)).api_key.revoked_at).not.toBeNull();
    expect((await call("/prompt-templates", { key })).status).toBe(401);
    // Revoking again changes nothing and records nothing more.
    expect((await call(`/api/public/v2/api-keys/${api_key.id}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    const revokes = (await entries(ws.key, "api_key.revoked")).filter((e) => e.target_id === String(api_key.id));
    expect(revokes).toHaveLength(1);
    expect(revokes[0]).toMatchObject({ details: { name: "dashboard", scopes: ["read"] }, user_email: ws.email });
  });

  it("is admin only; scopes are checked; another workspace's key is a 404", async () => {
    const writer = await scopedKey(ws, ["prompts:write", "settings:write"]);
    for (const [method, path] of [["POST", "/api/public/v2/api-keys"], ["GET", "/api/public/v2/api-keys"], ["DELETE", "/api/public/v2/api-keys/1"], ["GET", "/api/public/v2/audit-log"]]) {
      const res = await call(path, { method, key: writer, ...(method === "POST" ? { json: { name: "x", scopes: ["read"] } } : {}) });
      expect(res.status, path).toBe(403);
      expect((await json(res)).message).toContain("admin");
    }
    const bad = await call("/api/public/v2/api-keys", { method: "POST", key: ws.key, json: { name: "x", scopes: ["root"] } });
    expect(bad.status).toBe(400);
    expect((await call("/api/public/v2/api-keys", { method: "POST", key: ws.key, json: { name: "x", scopes: [] } })).status).toBe(400);
    expect((await call("/api/public/v2/api-keys", { method: "POST", key: ws.key, json: { name: "", scopes: ["read"] } })).status).toBe(400);
    const theirs = await json(await call("/api/public/v2/api-keys", { method: "POST", key: other.key, json: { name: "theirs", scopes: ["read"] } }));
    expect((await call(`/api/public/v2/api-keys/${theirs.api_key.id}`, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect((await call("/prompt-templates", { key: theirs.key })).status).toBe(200);
  });
});

describe("the audit log records", () => {
  it("labels created, moved and deleted, through the label routes and through a publish's release_labels", async () => {
    const name = `audited-${crypto.randomUUID().slice(0, 8)}`;
    const publish = (text: string, labels: string[]) =>
      call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat(text), metadata: model }, release_labels: labels } });
    const v1 = await json(await publish("one", ["prod"]));
    await publish("two", ["prod"]);
    const label = await json(await call(`/prompts/${v1.id}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 1, name: "beta" } }));
    await call(`/prompt-labels/${label.id}`, { method: "PATCH", key: ws.key, json: { prompt_version_number: 2 } });
    await call(`/prompt-labels/${label.id}`, { method: "DELETE", key: ws.key });
    const mine = (rows: Record<string, any>[]) => rows.filter((e) => e.target_id === String(v1.id)).map((e) => e.details);
    expect(mine(await entries(ws.key, "prompt_label.created", "&sort_order=asc"))).toEqual([
      expect.objectContaining({ prompt_template_label: "prod", prompt_template_version_number: 1, prompt_template_name: name }),
      expect.objectContaining({ prompt_template_label: "beta", prompt_template_version_number: 1 }),
    ]);
    expect(mine(await entries(ws.key, "prompt_label.moved", "&sort_order=asc"))).toEqual([
      expect.objectContaining({ prompt_template_label: "prod", prompt_template_version_number: 2, old_prompt_template_version_number: 1 }),
      expect.objectContaining({ prompt_template_label: "beta", prompt_template_version_number: 2, old_prompt_template_version_number: 1 }),
    ]);
    expect(mine(await entries(ws.key, "prompt_label.deleted"))).toEqual([expect.objectContaining({ prompt_template_label: "beta", prompt_template_version_number: 2 })]);
    // A label put back where it is has not moved: nothing recorded.
    const again = await json(await call(`/prompts/${v1.id}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 2, name: "stay" } }));
    expect((await call(`/prompt-labels/${again.id}`, { method: "PATCH", key: ws.key, json: { prompt_version_number: 2 } })).status).toBe(200);
    expect(mine(await entries(ws.key, "prompt_label.moved")).filter((d) => d.prompt_template_label === "stay")).toEqual([]);
  });

  it("policies set and removed", async () => {
    const policy = { detectors: [{ type: "email", action: "mask" }], custom: [{ name: "ticket", pattern: "T-[0-9]+", action: "hash" }] };
    expect((await call("/api/public/v2/redaction-policy", { method: "PUT", key: ws.key, json: policy })).status).toBe(200);
    expect((await call("/api/public/v2/redaction-policy", { method: "DELETE", key: ws.key })).status).toBe(200);
    const [updated] = await entries(ws.key, "redaction_policy.updated");
    expect(updated).toMatchObject({ target_type: "redaction_policy", details: { detectors: policy.detectors, custom: policy.custom } });
    expect(JSON.stringify(updated)).not.toContain("hash_key");
    expect(await entries(ws.key, "redaction_policy.deleted")).toHaveLength(1);
  });

  it("env vars set, changed and deleted: their names only, never their values", async () => {
    const made = await json(await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key: "AUDITED_SECRET", value: "top-secret-value-1" } }));
    const id = made.workspace_env_var.id;
    await call(`/api/public/v2/env-vars/${id}`, { method: "PATCH", key: ws.key, json: { value: "top-secret-value-2" } });
    await call(`/api/public/v2/env-vars/${id}`, { method: "DELETE", key: ws.key });
    for (const action of ["env_var.created", "env_var.updated", "env_var.deleted"]) {
      const found = (await entries(ws.key, action)).filter((e) => e.target_id === String(id));
      expect(found, action).toHaveLength(1);
      expect(found[0], action).toMatchObject({ target_type: "workspace_env_var", details: { key: "AUDITED_SECRET" } });
      expect(JSON.stringify(found[0])).not.toContain("top-secret");
    }
    const rows = await env.DB.prepare("SELECT details FROM audit_events WHERE workspace_id = ?").bind(ws.workspaceId).all<{ details: string }>();
    expect(JSON.stringify(rows.results)).not.toContain("top-secret");
  });

  it("log retention changed, webhooks created, their secrets rotated, and deleted", async () => {
    await call("/api/public/v2/workspace/log-retention", { method: "PUT", key: ws.key, json: { days: 30 } });
    expect((await entries(ws.key, "log_retention.updated"))[0]).toMatchObject({ details: { days: 30, previous_days: null } });
    const hook = await json(await call("/api/public/v2/webhooks", { method: "POST", key: ws.key, json: { url: "https://hooks.example.com/pe" } }));
    const rotated = await json(await call(`/api/public/v2/webhooks/${hook.webhook.id}/rotate-secret`, { method: "POST", key: ws.key, json: { overlap_seconds: 60 } }));
    expect(rotated.secret).toEqual(expect.any(String));
    await call(`/api/public/v2/webhooks/${hook.webhook.id}`, { method: "DELETE", key: ws.key });
    const [rotation] = await entries(ws.key, "webhook.secret_rotated");
    expect(rotation).toMatchObject({ target_id: String(hook.webhook.id), details: { previous_secret_expires_at: rotated.previous_secret_expires_at } });
    expect(JSON.stringify(rotation)).not.toContain(rotated.secret);
    expect(JSON.stringify(rotation)).not.toContain(hook.secret);
    expect((await entries(ws.key, "webhook.created"))[0]).toMatchObject({ target_id: String(hook.webhook.id), details: { url: "https://hooks.example.com/pe" } });
    expect((await entries(ws.key, "webhook.deleted"))[0]).toMatchObject({ target_id: String(hook.webhook.id) });
    expect(JSON.stringify(await entries(ws.key, "webhook.created"))).not.toContain(hook.secret);
  });
});

describe("the audit log itself", () => {
  it("is the workspace's own: another workspace sees none of it, and its filters are the lists' filters", async () => {
    await call("/api/public/v2/env-vars", { method: "POST", key: other.key, json: { key: "THEIRS", value: "x" } });
    const mine = await json(await call("/api/public/v2/audit-log?per_page=100", { key: ws.key }));
    expect(mine.items.length).toBeGreaterThan(0);
    expect(mine.items.every((e: { details: { key?: string } }) => e.details.key !== "THEIRS")).toBe(true);
    const theirs = await json(await call("/api/public/v2/audit-log?per_page=100", { key: other.key }));
    expect(theirs.items.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(["env_var.created"]));
    const myIds = new Set(mine.items.map((e: { id: number }) => e.id));
    expect(theirs.items.some((e: { id: number }) => myIds.has(e.id))).toBe(false);

    expect((await json(await call(`/api/public/v2/audit-log?created_by_email=${encodeURIComponent(ws.email.toUpperCase())}`, { key: ws.key }))).total).toBe(mine.total);
    expect((await json(await call("/api/public/v2/audit-log?created_by_email=nobody%40example.test", { key: ws.key }))).total).toBe(0);
    expect((await json(await call("/api/public/v2/audit-log?created_after=2999-01-01", { key: ws.key }))).total).toBe(0);
    const page = await json(await call("/api/public/v2/audit-log?per_page=1&page=2&sort_order=asc", { key: ws.key }));
    expect(page).toMatchObject({ page: 2, per_page: 1, total: mine.total, has_prev: true });
    expect(page.items[0].id).toBe([...mine.items].reverse()[1].id);
    expect((await call("/api/public/v2/audit-log?action=nope", { key: ws.key })).status).toBe(400);
    expect((await call("/api/public/v2/audit-log?per_page=101", { key: ws.key })).status).toBe(400);
  });

  it("is never edited: no route changes it, and the database refuses to", async () => {
    expect((await call("/api/public/v2/audit-log", { method: "DELETE", key: ws.key })).status).toBe(405);
    expect((await call("/api/public/v2/audit-log", { method: "POST", key: ws.key, json: {} })).status).toBe(405);
    await expect(env.DB.prepare("UPDATE audit_events SET action = 'x' WHERE workspace_id = ?").bind(ws.workspaceId).run()).rejects.toThrow(/never changed/);
    await expect(env.DB.prepare("DELETE FROM audit_events WHERE workspace_id = ?").bind(ws.workspaceId).run()).rejects.toThrow(/never deleted/);
  });
});

describe("provider base URLs take the admin scope (issue 42, item 1)", () => {
  it("a settings:write key sets other variables but not OPENAI_BASE_URL or any *_BASE_URL, workspace's or tool's; admin may", async () => {
    const settings = await scopedKey(ws, ["settings:write", "tools:write"]);
    expect((await call("/api/public/v2/env-vars", { method: "POST", key: settings, json: { key: "SOME_FLAG", value: "1" } })).status).toBe(201);
    for (const key of ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "mistral_base_url"]) {
      const res = await call("/api/public/v2/env-vars", { method: "POST", key: settings, json: { key, value: "https://attacker.example.com/v1" } });
      expect(res.status, key).toBe(403);
      expect((await json(res)).message).toContain("admin");
    }
    const tool = await json(await call("/api/public/v2/tool-registry", { method: "POST", key: ws.key, json: { name: `t-${crypto.randomUUID().slice(0, 8)}`, tool_definition: { type: "function", function: { name: "t" } } } }));
    expect((await call(`/api/public/v2/tool-registry/${tool.tool_registry.id}/env-vars`, { method: "POST", key: settings, json: { key: "OPENAI_BASE_URL", value: "https://attacker.example.com" } })).status).toBe(403);

    // Set by admin: the settings key can neither change nor delete it.
    const base = await json(await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key: "OPENAI_BASE_URL", value: "https://proxy.example.com/v1" } }));
    const id = base.workspace_env_var.id;
    expect((await call(`/api/public/v2/env-vars/${id}`, { method: "PATCH", key: settings, json: { value: "https://attacker.example.com/v1" } })).status).toBe(403);
    expect((await call(`/api/public/v2/env-vars/${id}`, { method: "DELETE", key: settings })).status).toBe(403);
    expect((await call(`/api/public/v2/env-vars/${id}`, { method: "PATCH", key: ws.key, json: { value: "https://proxy2.example.com/v1" } })).status).toBe(200);
    const list = await json(await call("/api/public/v2/env-vars", { key: settings }));
    expect(list.workspace_env_vars.find((v: { key: string }) => v.key === "OPENAI_BASE_URL").value_suffix).toBe("m/v1");
  });
});
