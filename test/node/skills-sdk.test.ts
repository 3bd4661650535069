// The official promptlayer SDK's skill methods (publish, pull, update) against a real `wrangler dev`.
import { strToU8, unzipSync, zipSync } from "fflate";
import { PromptLayer } from "promptlayer";
import { describe, expect, it } from "vitest";
import { sharedApi } from "./helpers/shared-api";

const api = sharedApi("skills-sdk-test");
const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url });

const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

describe("the official promptlayer SDK: skills", () => {
  it("publishes from files and pulls the JSON back", async () => {
    const name = uniq("sdk-files");
    const published = await pl.skills.publish({
      name,
      provider: "claude_code",
      commitMessage: "initial",
      files: [
        { path: ".claude/skills/refunds/SKILL.md", content: "# Refunds" },
        { path: ".claude/CLAUDE.md", content: "root" },
      ],
    });
    expect(published).toMatchObject({ success: true, skill_collection: { name, provider: "claude_code" } });
    const pulled = (await pl.skills.pull(name)) as any;
    expect(pulled.files).toEqual({ ".claude/CLAUDE.md": "root", ".claude/skills/refunds/SKILL.md": "# Refunds" });
    expect(pulled.version).toMatchObject({ number: 1, commit_message: "initial", user_email: "skills@example.test" });
    // By root path, which holds a `/` here: the SDK percent-encodes it and the server finds it.
    const team = await pl.skills.publish({ name: `Team/${name}`, provider: "openai", files: [{ path: "x.md", content: "x" }] });
    const root = String(team?.skill_collection.root_path);
    expect(root).toBe(`team/${name}`);
    expect(((await pl.skills.pull(root)) as any).skill_collection.id).toBe(team?.skill_collection.id);
  });

  it("publishes from a ZIP (the `files` part) and pulls it as a ZIP with the same bytes", async () => {
    const name = uniq("sdk-zip");
    const files = { "skills/x/SKILL.md": strToU8("---\nname: x\n---\nbody ✓"), "assets/blob.bin": new Uint8Array([0, 255, 13, 10, 45, 45]) };
    const published = await pl.skills.publish({ name, provider: "openai", zipFile: zipSync(files), fileName: "x.zip" });
    expect(published?.skill_collection).toMatchObject({ name, provider: "openai" });
    const zip = await pl.skills.pull(name, { format: "zip" });
    expect(zip).toBeInstanceOf(ArrayBuffer);
    const back = unzipSync(new Uint8Array(zip as ArrayBuffer));
    expect(Object.keys(back).sort()).toEqual(Object.keys(files).sort());
    for (const [p, data] of Object.entries(files)) expect([...back[p]]).toEqual([...data]);
  });

  it("updates (rename plus a version) and pulls by version and by label, as JSON and ZIP", async () => {
    const name = uniq("sdk-update");
    await pl.skills.publish({ name, provider: "claude_code", files: [{ path: "a.md", content: "v1" }, { path: "old.md", content: "o" }] });
    const renamed = uniq("sdk-renamed");
    const updated = (await pl.skills.update(name, {
      name: renamed,
      fileUpdates: [{ path: "a.md", content: "v2" }],
      moves: [{ from: "old.md", to: "docs/old.md" }],
      commitMessage: "second",
      releaseLabel: "prod",
    })) as any;
    expect(updated.skill_collection.name).toBe(renamed);
    expect(updated.version).toMatchObject({ number: 2, release_label: "prod", commit_message: "second", file_paths: ["a.md", "docs/old.md"] });

    // A version-only update (the SDK then goes straight to the versions endpoint).
    const third = (await pl.skills.update(renamed, { deletes: ["docs/old.md"], provider: "openclaw" })) as any;
    expect(third.version).toMatchObject({ number: 3, provider: "openclaw", file_paths: ["a.md"] });

    expect(((await pl.skills.pull(renamed, { version: 1 })) as any).files).toEqual({ "a.md": "v1", "old.md": "o" });
    expect(((await pl.skills.pull(renamed, { label: "prod" })) as any).files).toEqual({ "a.md": "v2", "docs/old.md": "o" });
    const zip = unzipSync(new Uint8Array((await pl.skills.pull(renamed, { label: "prod", format: "zip" })) as ArrayBuffer));
    expect(new TextDecoder().decode(zip["a.md"])).toBe("v2");
    const zip1 = unzipSync(new Uint8Array((await pl.skills.pull(renamed, { version: 1, format: "zip" })) as ArrayBuffer));
    expect(new TextDecoder().decode(zip1["a.md"])).toBe("v1");
    // A rename alone answers the collection and no new version.
    const renameOnly = (await pl.skills.update(renamed, { name: `${renamed}-x` })) as any;
    expect(renameOnly.skill_collection.name).toBe(`${renamed}-x`);
    expect(((await pl.skills.pull(`${renamed}-x`)) as any).version.number).toBe(3);
  });

  it("publishes into a folder (folderId), from files and from a ZIP", async () => {
    const res = await fetch(`${api.url}/api/public/v2/folders`, {
      method: "POST",
      headers: { "X-API-KEY": api.key, "Content-Type": "application/json" },
      body: JSON.stringify({ name: uniq("folder") }),
    });
    const folderId = ((await res.json()) as any).folder.id as number;
    const fromFiles = await pl.skills.publish({ name: uniq("in-folder"), provider: "openai", folderId, files: [{ path: "a.md", content: "a" }] });
    expect(fromFiles?.skill_collection.folder_id).toBe(folderId);
    const fromZip = await pl.skills.publish({ name: uniq("zip-folder"), provider: "openai", folderId, zipFile: zipSync({ "b.md": strToU8("b") }) });
    expect(fromZip?.skill_collection.folder_id).toBe(folderId);
    await expect(pl.skills.publish({ name: uniq("nowhere"), provider: "openai", folderId: 99999999, files: [] })).rejects.toThrow(/folder_id: folder 99999999 not found/);
  });

  it("surfaces our messages as the SDK's errors (404, 409, 400)", async () => {
    await expect(pl.skills.pull(uniq("missing"))).rejects.toThrow(/skill collection not found/);
    const name = uniq("sdk-dup");
    await pl.skills.publish({ name, provider: "claude_code", files: [] });
    await expect(pl.skills.publish({ name, provider: "claude_code", files: [] })).rejects.toThrow(/already exists/);
    await expect(pl.skills.update(name, { deletes: ["nope.md"] })).rejects.toThrow(/deletes\[0\]: nope\.md does not exist/);
    const quiet = new PromptLayer({ apiKey: api.key, baseURL: api.url, throwOnError: false });
    expect(await quiet.skills.pull(uniq("missing"))).toBeNull();
  });
});
