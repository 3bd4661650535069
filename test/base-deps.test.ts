// The block context: one stored-prompt lookup per context for each (name, version, label).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../src/db/client";
import { blockContextFor } from "../src/base-deps";
import { createWorkspace } from "./helpers/api";

describe("blockContextFor", () => {
  it("looks a stored prompt up once per context; a new context sees a newer version", async () => {
    const ws = await createWorkspace();
    const t = await env.DB.prepare("INSERT INTO prompt_templates (workspace_id, name) VALUES (?, 'memo') RETURNING id").bind(ws.workspaceId).first<{ id: number }>();
    const addVersion = (n: number) =>
      env.DB.prepare("INSERT INTO prompt_versions (workspace_id, prompt_id, version, prompt_template) VALUES (?, ?, ?, ?)")
        .bind(ws.workspaceId, t!.id, n, JSON.stringify({ type: "completion", content: [{ type: "text", text: `v${n}` }] }))
        .run();
    await addVersion(1);
    const ctx = blockContextFor(env, getDb(env.DB), ws.workspaceId);
    const first = ctx.resolvePrompt!({ name: "memo" });
    expect(ctx.resolvePrompt!({ name: "memo", version_number: null, label: null })).toBe(first);
    expect(ctx.resolvePrompt!({ name: "memo", version_number: 1 })).not.toBe(first);
    expect((await first)?.prompt_template).toMatchObject({ content: [{ text: "v1" }] });
    await addVersion(2);
    // The same context keeps what it found; the next one (the next chunk, batch or run) reads afresh.
    expect((await ctx.resolvePrompt!({ name: "memo" }))?.prompt_template).toMatchObject({ content: [{ text: "v1" }] });
    const next = blockContextFor(env, getDb(env.DB), ws.workspaceId);
    expect((await next.resolvePrompt!({ name: "memo" }))?.prompt_template).toMatchObject({ content: [{ text: "v2" }] });
  });
});
