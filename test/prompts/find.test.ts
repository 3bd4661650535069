import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { resolvePromptForBlocks } from "../../src/prompts/find";
import { createWorkspace } from "../helpers/api";

describe("resolvePromptForBlocks", () => {
  it("finds a stored prompt by name and version, by label, or its latest version, in the workspace only", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const t = await env.DB.prepare("INSERT INTO prompt_templates (workspace_id, name) VALUES (?, 'greeter') RETURNING id").bind(ws.workspaceId).first<{ id: number }>();
    for (const n of [1, 2]) {
      await env.DB.prepare("INSERT INTO prompt_versions (workspace_id, prompt_id, version, prompt_template, metadata) VALUES (?, ?, ?, ?, ?)")
        .bind(ws.workspaceId, t!.id, n, JSON.stringify({ type: "completion", content: [{ type: "text", text: `v${n}` }] }), JSON.stringify({ model: { provider: "openai", name: "m" } }))
        .run();
    }
    const db = getDb(env.DB);
    expect(await resolvePromptForBlocks(db, ws.workspaceId, { name: "greeter", version_number: 1 })).toEqual({
      prompt_template: { type: "completion", content: [{ type: "text", text: "v1" }] },
      metadata: { model: { provider: "openai", name: "m" } },
    });
    expect((await resolvePromptForBlocks(db, ws.workspaceId, { name: "greeter" }))?.prompt_template).toMatchObject({ content: [{ text: "v2" }] });
    expect(await resolvePromptForBlocks(db, ws.workspaceId, { name: "greeter", version_number: 3 })).toBeNull();
    expect(await resolvePromptForBlocks(db, other.workspaceId, { name: "greeter" })).toBeNull();
    const v1 = await env.DB.prepare("SELECT id FROM prompt_versions WHERE prompt_id = ? AND version = 1").bind(t!.id).first<{ id: number }>();
    await env.DB.prepare("INSERT INTO prompt_labels (workspace_id, prompt_id, prompt_version_id, name) VALUES (?, ?, ?, 'prod')").bind(ws.workspaceId, t!.id, v1!.id).run();
    expect((await resolvePromptForBlocks(db, ws.workspaceId, { name: "greeter", label: "prod" }))?.prompt_template).toMatchObject({ content: [{ text: "v1" }] });
    expect(await resolvePromptForBlocks(db, ws.workspaceId, { name: "greeter", label: "staging" })).toBeNull();
    expect(await resolvePromptForBlocks(db, other.workspaceId, { name: "greeter", label: "prod" })).toBeNull();
  });
});
