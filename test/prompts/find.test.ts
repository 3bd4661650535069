// The one lookup of a stored prompt version (src/prompts/find.ts): every selector, workspace
// isolation, each caller's precedence, and the API's answers in their order.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { blockContextFor } from "../../src/base-deps";
import { getDb } from "../../src/db/client";
import { findPromptVersion, findPromptVersions, loggedPromptVersion, requirePromptVersion } from "../../src/prompts";
import { createWorkspace } from "../helpers/api";

const text = (n: number | string) => ({ type: "completion", content: [{ type: "text", text: `v${n}` }] });

/** A template `name` with versions 1..count in `workspaceId`, and release label `label` on version 1. */
async function seed(workspaceId: number, name: string, count = 2, label = "prod") {
  const t = await env.DB.prepare("INSERT INTO prompt_templates (workspace_id, name) VALUES (?, ?) RETURNING id").bind(workspaceId, name).first<{ id: number }>();
  for (let n = 1; n <= count; n++) {
    await env.DB.prepare("INSERT INTO prompt_versions (workspace_id, prompt_id, version, prompt_template, metadata) VALUES (?, ?, ?, ?, ?)")
      .bind(workspaceId, t!.id, n, JSON.stringify(text(n)), JSON.stringify({ model: { provider: "openai", name: "m" } }))
      .run();
  }
  const v1 = await env.DB.prepare("SELECT id FROM prompt_versions WHERE prompt_id = ? AND version = 1").bind(t!.id).first<{ id: number }>();
  if (v1) await env.DB.prepare("INSERT INTO prompt_labels (workspace_id, prompt_id, prompt_version_id, name) VALUES (?, ?, ?, ?)").bind(workspaceId, t!.id, v1.id, label).run();
  return t!.id;
}

describe("findPromptVersion", () => {
  it("finds by id or name, and by version, label or the latest, in the workspace only", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const id = await seed(ws.workspaceId, "greeter");
    const db = getDb(env.DB);
    const number = async (sel: Parameters<typeof findPromptVersion>[2], workspaceId = ws.workspaceId) => (await findPromptVersion(db, workspaceId, sel))?.version.version ?? null;
    expect(await number({ id, version: 1 })).toBe(1);
    expect(await number({ name: "greeter", version: 2 })).toBe(2);
    expect(await number({ id, latest: true })).toBe(2);
    expect(await number({ name: "greeter", label: "prod" })).toBe(1);
    expect(await number({ identifier: String(id), label: "prod" })).toBe(1);
    expect(await number({ identifier: "greeter", latest: true })).toBe(2);
    expect(await number({ id, version: 3 })).toBeNull();
    expect(await number({ name: "greeter", label: "staging" })).toBeNull();
    expect(await number({ name: "nobody", latest: true })).toBeNull();
    for (const sel of [{ id, version: 1 }, { name: "greeter", latest: true }, { name: "greeter", label: "prod" }, { identifier: "greeter", latest: true }, { identifier: String(id), version: 1 }] as const) {
      expect(await number(sel, other.workspaceId)).toBeNull();
    }
    const found = await findPromptVersion(db, ws.workspaceId, { id, version: 2 });
    expect(found?.template).toMatchObject({ id, name: "greeter" });
    expect(found?.version.promptTemplate).toEqual(text(2));
  });

  it("an identifier is an id first, then a name: a template named like another's id is found by that id", async () => {
    const ws = await createWorkspace();
    const target = await seed(ws.workspaceId, "target", 1);
    await seed(ws.workspaceId, String(target), 3);
    const db = getDb(env.DB);
    const byIdentifier = await findPromptVersion(db, ws.workspaceId, { identifier: String(target), latest: true });
    expect(byIdentifier?.template.id).toBe(target);
    // The template the identifier picks lacks version 3: nothing, never the other template's.
    expect(await findPromptVersion(db, ws.workspaceId, { identifier: String(target), version: 3 })).toBeNull();
    expect((await findPromptVersion(db, ws.workspaceId, { name: String(target), version: 3 }))?.template.name).toBe(String(target));
  });

  it("a logged request names a version only with a version number and an id or name (by id first)", async () => {
    const ws = await createWorkspace();
    const id = await seed(ws.workspaceId, "logged");
    const db = getDb(env.DB);
    expect(await loggedPromptVersion(db, ws.workspaceId, { promptId: id })).toBeNull();
    expect(await loggedPromptVersion(db, ws.workspaceId, { versionNumber: 1 })).toBeNull();
    expect(await loggedPromptVersion(db, ws.workspaceId, { promptId: id, promptName: "not-it", versionNumber: 2 })).toMatchObject({ prompt_id: id, prompt_name: "logged", version: 2 });
    expect(await loggedPromptVersion(db, ws.workspaceId, { promptName: "logged", versionNumber: 1 })).toMatchObject({ prompt_id: id, version: 1, prompt_template: text(1) });
    expect(await loggedPromptVersion(db, ws.workspaceId, { promptName: "logged", versionNumber: 9 })).toBeNull();
  });
});

describe("findPromptVersions", () => {
  it("gives each listed template's latest version, or the one a label names; a template without one has no row", async () => {
    const ws = await createWorkspace();
    const a = await seed(ws.workspaceId, "bulk-a", 3);
    const b = await seed(ws.workspaceId, "bulk-b", 1, "staging");
    const empty = await seed(ws.workspaceId, "bulk-empty", 0);
    const unlisted = await seed(ws.workspaceId, "bulk-unlisted", 2);
    const db = getDb(env.DB);
    const byTemplate = (rows: { promptId: number; version: number }[]) => Object.fromEntries(rows.map((r) => [r.promptId, r.version]));
    expect(byTemplate(await findPromptVersions(db, [a, b, empty], { latest: true }))).toEqual({ [a]: 3, [b]: 1 });
    expect(byTemplate(await findPromptVersions(db, [a, b, empty], { label: "prod" }))).toEqual({ [a]: 1 });
    expect(byTemplate(await findPromptVersions(db, [a, b], { label: "staging" }))).toEqual({ [b]: 1 });
    expect(await findPromptVersions(db, [a, b], { label: "nobody" })).toEqual([]);
    expect(await findPromptVersions(db, [], { latest: true })).toEqual([]);
    const [latestA] = await findPromptVersions(db, [a], { latest: true });
    expect(latestA).toMatchObject({ promptId: a, version: 3, promptTemplate: text(3), workspaceId: ws.workspaceId });
    expect((await findPromptVersions(db, [unlisted], { latest: true })).map((r) => r.version)).toEqual([2]);
  });
});

describe("requirePromptVersion", () => {
  it("answers the template's 404 first, then version and label together (400), then the missing label, version or versions", async () => {
    const ws = await createWorkspace();
    const id = await seed(ws.workspaceId, "strict");
    await seed(ws.workspaceId, "empty", 0);
    const db = getDb(env.DB);
    const failure = (p: Promise<unknown>) => p.then(() => null, (e: { status: number; message: string }) => [e.status, e.message]);
    expect(await failure(requirePromptVersion(db, ws.workspaceId, { identifier: "nobody" }, { version: 1, label: "prod" }))).toEqual([404, "prompt template not found"]);
    expect(await failure(requirePromptVersion(db, ws.workspaceId, { name: "strict" }, { version: 1, label: "prod" }))).toEqual([400, "version: give either version or label, not both"]);
    expect(await failure(requirePromptVersion(db, ws.workspaceId, { id }, { label: "staging" }))).toEqual([404, 'label: no release label "staging" on this prompt template']);
    expect(await failure(requirePromptVersion(db, ws.workspaceId, { identifier: "strict" }, { version: 7 }))).toEqual([404, "version: prompt template has no version 7"]);
    expect(await failure(requirePromptVersion(db, ws.workspaceId, { name: "empty" }, {}))).toEqual([404, "prompt template has no versions"]);
    const other = await createWorkspace();
    expect(await failure(requirePromptVersion(db, other.workspaceId, { id }, {}))).toEqual([404, "prompt template not found"]);
    expect((await requirePromptVersion(db, ws.workspaceId, { identifier: String(id) }, { label: "prod", version: null })).version.version).toBe(1);
    expect((await requirePromptVersion(db, ws.workspaceId, { name: "strict" }, {})).version.version).toBe(2);
  });
});

describe("blocks' stored prompts", () => {
  it("finds a stored prompt by name and version, by label (which wins), or its latest version, in the workspace only", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    await seed(ws.workspaceId, "greeter");
    const resolve = (workspaceId: number) => blockContextFor(env, getDb(env.DB), workspaceId).resolvePrompt!;
    expect(await resolve(ws.workspaceId)({ name: "greeter", version_number: 1 })).toEqual({ prompt_template: text(1), metadata: { model: { provider: "openai", name: "m" } } });
    expect((await resolve(ws.workspaceId)({ name: "greeter" }))?.prompt_template).toMatchObject({ content: [{ text: "v2" }] });
    expect(await resolve(ws.workspaceId)({ name: "greeter", version_number: 3 })).toBeNull();
    expect(await resolve(other.workspaceId)({ name: "greeter" })).toBeNull();
    expect((await resolve(ws.workspaceId)({ name: "greeter", label: "prod" }))?.prompt_template).toMatchObject({ content: [{ text: "v1" }] });
    expect((await resolve(ws.workspaceId)({ name: "greeter", label: "prod", version_number: 2 }))?.prompt_template).toMatchObject({ content: [{ text: "v1" }] });
    expect(await resolve(ws.workspaceId)({ name: "greeter", label: "staging" })).toBeNull();
    expect(await resolve(other.workspaceId)({ name: "greeter", label: "prod" })).toBeNull();
  });
});
