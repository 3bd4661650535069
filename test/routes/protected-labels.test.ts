// Protected release labels hold against every other way in: an A/B release on one (created, ramped,
// or ramped by its guardrails), a template deleted through folders or renamed by its external ID, a
// label moved by that upsert (audited), and the protection race (a label protected meanwhile). Each
// refusal is a 4xx in the error shape that changes nothing.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { getDb } from "../../src/db/client";
import { promptLabels, promptVersions } from "../../src/db/schema";
import { deleteLabelAsRead, moveLabelAsRead } from "../../src/services/registry/prompt-templates";
import { buildDeps } from "../../src/deps";
import { rollupAbLogs } from "../../src/logs";
import { assignmentKeys, runGuardrails } from "../../src/services/releases";
import { call, createWorkspace, json, logsDb, scopedKey, type TestKey } from "../helpers/api";
import { AB, completion, publish, uniq } from "../helpers/releases";

let ws: TestKey;
let writer: string;

/** A template with v1, v2 and `prod` on v1, `prod` protected by the admin key. */
async function protectedTemplate() {
  const name = uniq("pl");
  const first = await publish(ws.key, name, "v1", ["prod"]);
  await publish(ws.key, name, "v2");
  const labelId = (await json(await call(`/prompt-templates/${name}/labels`, { key: ws.key }))).release_labels[0].release_label_id as number;
  expect((await call(`/api/public/v2/prompt-labels/${labelId}/protection`, { method: "PUT", key: ws.key, json: { protected: true } })).status).toBe(200);
  return { name, id: first.id as number, labelId };
}

const served = async (name: string) => (await json(await call(`/prompt-templates/${name}?label=prod`, { key: ws.key }))).version as number;
const count = async (sql: string, ...binds: unknown[]) => (await env.DB.prepare(sql).bind(...binds).first<{ n: number }>())!.n;
const auditCount = (action: string, target: number | string) => count("SELECT count(*) AS n FROM audit_events WHERE workspace_id = ? AND action = ? AND target_id = ?", ws.workspaceId, action, String(target));

beforeAll(async () => {
  ws = await createWorkspace();
  writer = await scopedKey(ws, ["prompts:write"]);
});

describe("A/B releases on a protected label", () => {
  const allIn = (t: { id: number }) => ({
    name: "sneak",
    prompt_template_id: t.id,
    release_label: "prod",
    variants: [
      { key: "a", prompt_version_number: 1, percentage: 0 },
      { key: "b", prompt_version_number: 2, percentage: 100 },
    ],
  });

  it("a prompts:write key cannot create one (403, nothing stored); an admin key can", async () => {
    const t = await protectedTemplate();
    const refused = await call(AB, { method: "POST", key: writer, json: allIn(t) });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ success: false, error: "forbidden", message: expect.stringMatching(/protected.*admin/) });
    expect(await count("SELECT count(*) AS n FROM ab_tests WHERE prompt_id = ?", t.id)).toBe(0);
    expect(await served(t.name)).toBe(1);
    const made = await call(AB, { method: "POST", key: ws.key, json: { ...allIn(t), variants: [{ key: "a", prompt_version_number: 1, percentage: 100 }, { key: "b", prompt_version_number: 2, percentage: 0 }] } });
    expect(made.status).toBe(201);
  });

  it("a prompts:write key cannot ramp a challenger up or resume (403, unchanged), may ramp down and pause; an admin ramps", async () => {
    const t = await protectedTemplate();
    const id = (await json(await call(AB, { method: "POST", key: ws.key, json: {
          ...allIn(t),
          variants: [{ key: "a", prompt_version_number: 1, percentage: 90 }, { key: "b", prompt_version_number: 2, percentage: 10 }],
          segments: [{ name: "free", conditions: [{ key: "plan", operator: "in", value: ["free"] }], variants: [{ key: "a", percentage: 100 }, { key: "b", percentage: 0 }] }],
        } }))).ab_test.id;
    const up = await call(`${AB}/${id}`, { method: "PATCH", key: writer, json: { variants: [{ key: "a", percentage: 0 }, { key: "b", percentage: 100 }] } });
    expect(up.status).toBe(403);
    expect((await json(up)).error).toBe("forbidden");
    const seg = await call(`${AB}/${id}`, { method: "PATCH", key: writer, json: { segments: [{ name: "free", variants: [{ key: "a", percentage: 0 }, { key: "b", percentage: 100 }] }] } });
    expect(seg.status).toBe(403);
    let now = (await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test;
    expect(now.revision).toBe(1);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: writer, json: { variants: [{ key: "a", percentage: 95 }, { key: "b", percentage: 5 }] } })).status).toBe(200);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: writer, json: { status: "paused" } })).status).toBe(200);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: writer, json: { status: "running" } })).status).toBe(403);
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: ws.key, json: { status: "running", variants: [{ key: "a", percentage: 50 }, { key: "b", percentage: 50 }] } })).status).toBe(200);
    now = (await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test;
    expect(now).toMatchObject({ status: "running", revision: 4 });
  });

  it("a release made on an unprotected label is held to the rule once the label is protected", async () => {
    const name = uniq("pl");
    const first = await publish(ws.key, name, "v1", ["prod"]);
    await publish(ws.key, name, "v2");
    const made = await call(AB, { method: "POST", key: writer, json: { ...allIn({ id: first.id }), variants: [{ key: "a", prompt_version_number: 1, percentage: 90 }, { key: "b", prompt_version_number: 2, percentage: 10 }] } });
    expect(made.status).toBe(201);
    const id = (await json(made)).ab_test.id;
    const labelId = (await json(await call(`/prompt-templates/${name}/labels`, { key: ws.key }))).release_labels[0].release_label_id;
    await call(`/api/public/v2/prompt-labels/${labelId}/protection`, { method: "PUT", key: ws.key, json: { protected: true } });
    expect((await call(`${AB}/${id}`, { method: "PATCH", key: writer, json: { variants: [{ key: "a", percentage: 0 }, { key: "b", percentage: 100 }] } })).status).toBe(403);
    expect((await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test).toMatchObject({ revision: 1, variants: [{ key: "a", percentage: 90 }, { key: "b", percentage: 10 }] });
  });

  it("the guardrails' ramp to 100 % on a protected label asks for approval instead of serving the challenger alone", async () => {
    const t = await protectedTemplate();
    const guardrails = { min_duration_hours: 0, min_samples_per_variant: 10, metrics: [{ type: "error_rate", max_regression: 0.05 }], on_success: "ramp", ramp: { steps: [100], every_hours: 0 } };
    const body = { ...allIn(t), assignment_key: "user_id", guardrails, variants: [{ key: "a", prompt_version_number: 1, percentage: 50 }, { key: "b", prompt_version_number: 2, percentage: 50 }] };
    const id = (await json(await call(AB, { method: "POST", key: ws.key, json: body }))).ab_test.id;
    for (const version of [1, 2]) {
      await Promise.all(Array.from({ length: 12 }, (_, i) =>
        call("/log-request", {
          method: "POST",
          key: ws.key,
          json: { provider: "openai", model: "m", input: { type: "chat", messages: [] }, output: { type: "chat", messages: [] }, request_start_time: 1_767_225_600_000 + i, request_end_time: 1_767_225_600_500, prompt_id: t.id, prompt_version_number: version, status: "SUCCESS" },
        }),
      ));
    }
    await rollupAbLogs(getDb(await logsDb(ws)), (ids) => assignmentKeys(getDb(env.DB), ids));
    await runGuardrails(getDb(env.DB), (w) => buildDeps(env).logs(w), Date.now() + 3_600_000 * 24 * 30);
    const r = (await json(await call(`${AB}/${id}`, { key: ws.key }))).ab_test;
    expect(r).toMatchObject({ status: "running", revision: 1, pending_change_request_id: expect.any(Number), variants: [{ key: "a", percentage: 50 }, { key: "b", percentage: 50 }] });
    expect((await json(await call(`/prompt-templates/${t.name}/labels`, { key: ws.key }))).release_labels[0].prompt_version_number).toBe(1);
  });
});

describe("deleting or renaming a template that holds a protected label", () => {
  const FOLDERS = "/api/public/v2/folders/entities";
  const remove = (key: string, entities: { id: number | string; type: string }[]) => call(FOLDERS, { method: "DELETE", key, json: { entities } });
  const webhookCount = (type: string, promptId: number) =>
    count("SELECT count(*) AS n FROM webhook_events WHERE workspace_id = ? AND event_type = ? AND json_extract(details, '$.prompt_template_id') = ?", ws.workspaceId, type, promptId);

  it("through folders: a prompts:write key gets a 409 and nothing goes; an admin deletes it, its labels, requests and releases audited", async () => {
    const t = await protectedTemplate();
    const asked = await call(`/prompt-labels/${t.labelId}`, { method: "PATCH", key: writer, json: { prompt_version_number: 2 } });
    const crId = (await json(asked)).change_request.id as number;
    const abId = (await json(await call(AB, { method: "POST", key: ws.key, json: { name: "r", prompt_template_id: t.id, release_label: "prod", variants: [{ key: "a", prompt_version_number: 1, percentage: 90 }, { key: "b", prompt_version_number: 2, percentage: 10 }] } }))).ab_test.id as number;

    const refused = await remove(writer, [{ id: t.id, type: "PROMPT" }]);
    expect(refused.status).toBe(409);
    expect(await json(refused)).toMatchObject({ success: false, error: "conflict", message: expect.stringMatching(/protected release label "prod".*admin/) });
    expect((await call(`/prompt-templates/${t.name}/labels`, { key: ws.key })).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM ab_tests WHERE id = ? AND deleted_at IS NULL", abId)).toBe(1);

    const done = await remove(ws.key, [{ id: t.id, type: "PROMPT" }]);
    expect(done.status).toBe(200);
    expect((await call(`/prompt-templates/${t.name}/labels`, { key: ws.key })).status).toBe(404);
    expect(await auditCount("prompt_label.deleted", t.id)).toBe(1);
    expect(await webhookCount("prompt_template_label_deleted", t.id)).toBe(1);
    expect(await auditCount("prompt_label.change_denied", t.id)).toBe(1);
    expect(await auditCount("ab_test.deleted", abId)).toBe(1);
    // The request went with its template: deciding it is a 404, not a 500.
    expect((await call(`/api/public/v2/label-change-requests/${crId}/approve`, { method: "POST", key: ws.key })).status).toBe(404);
    expect((await call(`${AB}/${abId}`, { key: ws.key })).status).toBe(404);
  });

  it("a template without a protected label is deleted by a prompts:write key, each label in the audit log", async () => {
    const name = uniq("pl");
    const t = await publish(ws.key, name, "v1", ["prod", "staging"]);
    expect((await remove(writer, [{ id: t.id, type: "PROMPT" }])).status).toBe(200);
    expect(await auditCount("prompt_label.deleted", t.id)).toBe(2);
  });

  it("an A/B release or a tool deleted through folders is in the audit log (ab_test.deleted, env_var.deleted)", async () => {
    const name = uniq("pl");
    const t = await publish(ws.key, name, "v1", ["prod"]);
    await publish(ws.key, name, "v2");
    const abId = (await json(await call(AB, { method: "POST", key: writer, json: { name: "r", prompt_template_id: t.id, release_label: "prod", variants: [{ key: "a", prompt_version_number: 1, percentage: 90 }, { key: "b", prompt_version_number: 2, percentage: 10 }] } }))).ab_test.id;
    expect((await remove(writer, [{ id: abId, type: "AB_TEST" }])).status).toBe(200);
    const rows = (await json(await call(`/api/public/v2/audit-log?action=ab_test.deleted&target_id=${abId}`, { key: ws.key }))).items;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ api_key_prefix: writer.slice(0, 11), details: { ab_test_id: abId } });

    const tool = (await json(await call("/api/public/v2/tool-registry", { method: "POST", key: ws.key, json: { name: uniq("tool"), tool_definition: { type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } } } }))).tool_registry;
    const v = await call(`/api/public/v2/tool-registry/${tool.id}/env-vars`, { method: "POST", key: ws.key, json: { key: "TOKEN", value: "s3cret-value-long" } });
    expect(v.status).toBe(201);
    const varId = (await json(v)).tool_env_var.id;
    expect((await remove(ws.key, [{ id: tool.id, type: "TOOL_REGISTRY" }])).status).toBe(200);
    const gone = (await json(await call(`/api/public/v2/audit-log?action=env_var.deleted&target_id=${varId}`, { key: ws.key }))).items;
    expect(gone).toHaveLength(1);
    expect(gone[0]).toMatchObject({ target_type: "tool_env_var", details: { key: "TOKEN", tool_registry_id: tool.id } });
    expect(JSON.stringify(gone[0])).not.toContain("s3cret");
  });

  it("renaming it by its external ID takes admin (409 otherwise, the name unchanged)", async () => {
    const t = await protectedTemplate();
    const ext = uniq("ext");
    const put = (key: string, promptName: string) =>
      call(`/prompt-templates/by-external-id/git/${ext}`, { method: "PUT", key, json: { prompt_template: { prompt_name: promptName }, prompt_version: { prompt_template: completion("v2") } } });
    expect((await put(writer, t.name)).status).toBe(200);
    const renamed = `${t.name}-renamed`;
    const refused = await put(writer, renamed);
    expect(refused.status).toBe(409);
    expect((await json(refused)).error).toBe("conflict");
    expect((await call(`/prompt-templates/${t.name}/labels`, { key: ws.key })).status).toBe(200);
    expect((await put(ws.key, renamed)).status).toBe(200);
    expect((await call(`/prompt-templates/${renamed}/labels`, { key: ws.key })).status).toBe(200);
  });
});

describe("labels moved by the by-external-id upsert", () => {
  it("a label created or moved without a new version is in the audit log with its event, once", async () => {
    const name = uniq("pl");
    const first = await publish(ws.key, name, "v1", ["prod"]);
    await publish(ws.key, name, "v2");
    const ext = uniq("ext");
    const put = (labels: string[]) =>
      call(`/prompt-templates/by-external-id/git/${ext}`, { method: "PUT", key: writer, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: completion("v3") }, release_labels: labels } });
    // The first maps the ID (and publishes v3); then the same content: no new version, the labels follow the body.
    expect((await put([])).status).toBe(200);
    expect((await put(["prod", "staging"])).status).toBe(200);
    expect((await put(["prod", "staging"])).status).toBe(200);
    const labels = (await json(await call(`/prompt-templates/${name}/labels`, { key: ws.key }))).release_labels;
    expect(labels.map((l: { release_label: string; prompt_version_number: number }) => [l.release_label, l.prompt_version_number]).sort()).toEqual([["prod", 3], ["staging", 3]]);
    expect(await auditCount("prompt_label.moved", first.id)).toBe(1);
    expect(await auditCount("prompt_label.created", first.id)).toBe(2); // prod by the first publish, staging here
    const moved = (await json(await call(`/api/public/v2/audit-log?action=prompt_label.moved&target_id=${first.id}`, { key: ws.key }))).items[0];
    expect(moved).toMatchObject({ api_key_prefix: writer.slice(0, 11), details: { prompt_template_label: "prod", prompt_template_version_number: 3, old_prompt_template_version_number: 1 } });
    expect(await count("SELECT count(*) AS n FROM webhook_events WHERE workspace_id = ? AND event_type = 'prompt_template_label_moved' AND json_extract(details, '$.prompt_template_id') = ?", ws.workspaceId, first.id)).toBe(1);
  });
});

describe("a label protected while it is moved or deleted", () => {
  const auth = () => ({ workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0, scopes: ["prompts:write"] });
  const labelRow = async (id: number) => (await getDb(env.DB).select().from(promptLabels).where(eq(promptLabels.id, id)))[0];

  it("read unprotected, protected before the write: neither moved nor deleted (409), nothing recorded", async () => {
    const name = uniq("pl");
    const t = await publish(ws.key, name, "v1", ["prod"]);
    await publish(ws.key, name, "v2");
    const labelId = (await json(await call(`/prompt-templates/${name}/labels`, { key: ws.key }))).release_labels[0].release_label_id as number;
    const stale = await labelRow(labelId);
    const v2 = (await getDb(env.DB).select().from(promptVersions).where(and(eq(promptVersions.promptId, t.id), eq(promptVersions.version, 2))))[0];
    await call(`/api/public/v2/prompt-labels/${labelId}/protection`, { method: "PUT", key: ws.key, json: { protected: true } });
    await expect(moveLabelAsRead(getDb(env.DB), auth(), stale, v2)).rejects.toMatchObject({ status: 409, code: "conflict" });
    await expect(deleteLabelAsRead(getDb(env.DB), auth(), stale)).rejects.toMatchObject({ status: 409, code: "conflict" });
    expect(await labelRow(labelId)).toMatchObject({ protected: true, promptVersionId: stale.promptVersionId });
    expect(await auditCount("prompt_label.moved", t.id)).toBe(0);
    expect(await auditCount("prompt_label.deleted", t.id)).toBe(0);
  });

  it("a label that had change requests while protected is deleted once unprotected (its requests with it), not a 500", async () => {
    const t = await protectedTemplate();
    const cr = (await json(await call(`/prompt-labels/${t.labelId}`, { method: "PATCH", key: writer, json: { prompt_version_number: 2 } }))).change_request.id;
    await call(`/api/public/v2/prompt-labels/${t.labelId}/protection`, { method: "PUT", key: ws.key, json: { protected: false } });
    expect((await call(`/prompt-labels/${t.labelId}`, { method: "DELETE", key: writer })).status).toBe(204);
    expect(await auditCount("prompt_label.change_denied", t.id)).toBe(1);
    expect((await call(`/api/public/v2/label-change-requests/${cr}/approve`, { method: "POST", key: ws.key })).status).toBe(404);
  });
});
