import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { strToU8, unzipSync, zipSync, type Zippable } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

const BASE = "/api/public/v2/skill-collections";
const MiB = 1024 * 1024;
let ws: TestKey;
let other: TestKey;
let n = 0;

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

const uniq = (prefix = "col") => `${prefix}-${Date.now().toString(36)}-${++n}`;
const enc = (s: string) => encodeURIComponent(s);

function create(body: unknown, key = ws.key) {
  return call(BASE, { method: "POST", key, json: body });
}

function saveVersion(identifier: string, body: unknown, key = ws.key) {
  return call(`${BASE}/${enc(identifier)}/versions`, { method: "POST", key, json: body });
}

function pull(identifier: string, query = "", key = ws.key) {
  return call(`${BASE}/${enc(identifier)}${query}`, { key });
}

function form(parts: Record<string, string | Uint8Array>): FormData {
  const fd = new FormData();
  for (const [name, v] of Object.entries(parts)) {
    if (typeof v === "string") fd.append(name, v);
    else fd.append(name, new Blob([v], { type: "application/zip" }), "upload.zip");
  }
  return fd;
}

function upload(path: string, parts: Record<string, string | Uint8Array>, key = ws.key) {
  return call(path, { method: "POST", key, body: form(parts) });
}

/** The app with some vars changed (small limits), through its real fetch handler. */
async function withVars(vars: Record<string, string>, req: Request): Promise<Response> {
  return createApp().fetch(req, { ...env, ...vars }, createExecutionContext());
}

async function expectError(res: Response, status: number, message: RegExp) {
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(status);
  expect(b.success).toBe(false);
  expect(b.message).toMatch(message);
  return b;
}

async function created(body: unknown, key = ws.key) {
  const res = await create(body, key);
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(201);
  return b;
}

async function pulled(identifier: string, query = "", key = ws.key) {
  const res = await pull(identifier, query, key);
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(200);
  return b;
}

async function blobCount(workspaceId: number): Promise<number> {
  const listed = await env.BLOBS.list({ prefix: `skills/${workspaceId}/` });
  return listed.objects.length;
}

async function rowCount(workspaceId: number): Promise<{ collections: number; versions: number }> {
  const c = await env.DB.prepare("SELECT count(*) AS n FROM skill_collections WHERE workspace_id = ?").bind(workspaceId).first<{ n: number }>();
  const v = await env.DB.prepare("SELECT count(*) AS n FROM skill_collection_versions WHERE workspace_id = ?").bind(workspaceId).first<{ n: number }>();
  return { collections: c!.n, versions: v!.n };
}

/** Runs `fn` in a fresh workspace and checks it left no row and no blob behind. */
async function leavesNothing(fn: (key: string) => Promise<void>) {
  const w = await createWorkspace();
  await fn(w.key);
  expect(await rowCount(w.workspaceId)).toEqual({ collections: 0, versions: 0 });
  expect(await blobCount(w.workspaceId)).toBe(0);
}

describe("POST /skill-collections (JSON)", () => {
  it("creates the collection and version 1 with its files: 201 with the interface's fields", async () => {
    const name = uniq("Support Skills");
    const b = await created({
      name,
      provider: "claude_code",
      commit_message: "first",
      files: [
        { path: ".claude/skills/refunds/SKILL.md", content: "# Refunds" },
        { path: ".claude/CLAUDE.md", content: "root" },
      ],
    });
    expect(b).toEqual({
      success: true,
      skill_collection: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        workspace_id: ws.workspaceId,
        folder_id: null,
        root_path: name.toLowerCase().replace(/ /g, "-"),
        name,
        provider: "claude_code",
        is_deleted: false,
        created_by: ws.userId,
        created_at: expect.stringMatching(/Z$/),
        updated_by: ws.userId,
        updated_at: expect.stringMatching(/Z$/),
        external_ids: [],
      },
      external_ids: [],
      version: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        skill_collection_id: b.skill_collection.id,
        workspace_id: ws.workspaceId,
        number: 1,
        root_path_at_version: b.skill_collection.root_path,
        provider: "claude_code",
        file_paths: [".claude/CLAUDE.md", ".claude/skills/refunds/SKILL.md"],
        commit_message: "first",
        release_label: null,
        archived: false,
        created_by: ws.userId,
        user_email: ws.email,
        created_at: b.skill_collection.created_at,
      },
    });
    const got = await pulled(b.skill_collection.id);
    expect(got.files).toEqual({ ".claude/CLAUDE.md": "root", ".claude/skills/refunds/SKILL.md": "# Refunds" });
  });

  it("creates an empty collection (no files, no provider)", async () => {
    const b = await created({ name: uniq() });
    expect(b.skill_collection.provider).toBeNull();
    expect(b.version.file_paths).toEqual([]);
    expect((await pulled(b.skill_collection.id)).files).toEqual({});
  });

  it("answers 409 for a name already used in the workspace, and 201 for the same name in another", async () => {
    const name = uniq();
    await created({ name });
    await expectError(await create({ name }), 409, /already exists/);
    await created({ name }, other.key);
  });

  it("derives distinct root paths for names that slug alike, and takes an explicit root_path", async () => {
    const stem = uniq("Same Name");
    const a = await created({ name: stem });
    const b = await created({ name: stem.toUpperCase() });
    expect(a.skill_collection.root_path).toBe(stem.toLowerCase().replace(/ /g, "-"));
    expect(b.skill_collection.root_path).toBe(`${a.skill_collection.root_path}-2`);
    const root = `team/${uniq("x")}`;
    const c = await created({ name: uniq(), root_path: `/${root}` });
    expect(c.skill_collection.root_path).toBe(root);
    await expectError(await create({ name: uniq(), root_path: root }), 409, /root_path/);
    await expectError(await create({ name: uniq(), root_path: "a/../b" }), 400, /root_path: must not contain \.\./);
  });

  it("refuses bad names and providers with 400", async () => {
    await expectError(await create({}), 400, /name: is required/);
    await expectError(await create({ name: "" }), 400, /name: must not be empty/);
    await expectError(await create({ name: "x".repeat(256) }), 400, /name: must be at most 255/);
    await created({ name: `${uniq()}${"x".repeat(200)}` });
    await expectError(await create({ name: " padded" }), 400, /name: must not start or end with whitespace/);
    await expectError(await create({ name: crypto.randomUUID() }), 400, /name: must not be a UUID/);
    await expectError(await create({ name: uniq(), provider: "cursor" }), 400, /provider: must be one of claude_code, openai, openclaw/);
    for (const provider of ["claude_code", "openai", "openclaw", null]) await created({ name: uniq(), provider });
  });

  it("refuses bad paths and duplicates with 400, leaving nothing behind", async () => {
    const cases: [string[], RegExp][] = [
      [["/abs.md"], /files\[0\]\.path: must be relative/],
      [["a/../../etc"], /files\[0\]\.path: must not contain \.\./],
      [["a\\b.md"], /files\[0\]\.path: must use \/ as separator/],
      [["a//b.md"], /files\[0\]\.path: must not contain empty names/],
      [[""], /files\[0\]\.path: must not be empty/],
      [["a.md", "./a.md"], /files\[1\]\.path: duplicates files\[0\]\.path/],
      [["x", "x/y"], /x would be both a file and a folder/],
    ];
    await leavesNothing(async (key) => {
      for (const [paths, message] of cases) {
        await expectError(await create({ name: uniq(), files: paths.map((path) => ({ path, content: "c" })) }, key), 400, message);
      }
    });
  });

  it("takes a file of 5 MiB and refuses one byte more with 413, storing nothing", async () => {
    const big = "a".repeat(5 * MiB);
    const ok = await created({ name: uniq(), files: [{ path: "big.txt", content: big }] });
    expect(ok.version.file_paths).toEqual(["big.txt"]);
    await leavesNothing(async (key) => {
      await expectError(await create({ name: uniq(), files: [{ path: "big.txt", content: `${big}b` }] }, key), 413, /files\[0\]\.content: is larger than 5 MiB/);
    });
  });

  it("takes 1,000 files and refuses 1,001 with 413", async () => {
    const files = (count: number) => Array.from({ length: count }, (_, i) => ({ path: `f/${i}.md`, content: "same" }));
    const ok = await created({ name: uniq(), files: files(1000) });
    expect(ok.version.file_paths).toHaveLength(1000);
    // Identical contents are one blob.
    await leavesNothing(async (key) => {
      await expectError(await create({ name: uniq(), files: files(1001) }, key), 413, /at most 1000 files/);
    });
  });

  it("refuses a version over SKILL_VERSION_MAX_BYTES in all (413) and a JSON body over SKILL_JSON_MAX_BYTES (413)", async () => {
    const body = (content: string) => JSON.stringify({ name: uniq(), files: [{ path: "a", content }, { path: "b", content }] });
    const req = (b: string, key: string) => new Request(`http://api.test${BASE}`, { method: "POST", headers: { "X-API-KEY": key, "Content-Type": "application/json" }, body: b });
    expect((await withVars({ SKILL_VERSION_MAX_BYTES: "200" }, req(body("x".repeat(100)), ws.key))).status).toBe(201);
    await leavesNothing(async (key) => {
      await expectError(await withVars({ SKILL_VERSION_MAX_BYTES: "200" }, req(body("x".repeat(101)), key)), 413, /at most 200 bytes/);
      await expectError(await withVars({ SKILL_JSON_MAX_BYTES: "100" }, req(body("x".repeat(100)), key)), 413, /larger than 100 bytes/);
    });
  });

  it("answers 415 for another content type and 401 without a key", async () => {
    await expectError(await call(BASE, { method: "POST", key: ws.key, body: "name=x", headers: { "Content-Type": "text/plain" } }), 415, /./);
    await expectError(await call(BASE, { method: "POST", json: { name: uniq() } }), 401, /X-API-KEY/);
  });
});

describe("POST /skill-collections (multipart with a ZIP)", () => {
  const zip = (files: Zippable) => zipSync(files);

  it("creates from a ZIP in `archive`, `zip` or `files`, with metadata in `metadata` or `json`", async () => {
    const archive = zip({ "skills/a/SKILL.md": strToU8("A"), "README.md": strToU8("R") });
    for (const [part, meta] of [["archive", "metadata"], ["zip", "json"], ["files", "json"]] as const) {
      const name = uniq(part);
      const res = await upload(BASE, { [meta]: JSON.stringify({ name, provider: "openai", commit_message: "zip" }), [part]: archive });
      const b = await json(res);
      expect(res.status, JSON.stringify(b)).toBe(201);
      expect(b.skill_collection).toMatchObject({ name, provider: "openai" });
      expect(b.version).toMatchObject({ number: 1, commit_message: "zip", file_paths: ["README.md", "skills/a/SKILL.md"] });
      expect((await pulled(name)).files).toEqual({ "README.md": "R", "skills/a/SKILL.md": "A" });
    }
  });

  it("reads the metadata whether it comes before or after the archive (the SDK sends it after)", async () => {
    const name = uniq();
    const fd = new FormData();
    fd.append("files", new Blob([zip({ "a.md": strToU8("a") })]), "x.zip");
    fd.append("json", JSON.stringify({ name }));
    const res = await call(BASE, { method: "POST", key: ws.key, body: fd });
    expect(res.status).toBe(201);
  });

  it("round trip: publish from ZIP, pull as ZIP: the same bytes per file, binary included", async () => {
    const files: Record<string, Uint8Array> = {
      "skills/x/SKILL.md": strToU8("---\nname: x\n---\nbody é ✓\n"),
      "skills/x/assets/logo.png": crypto.getRandomValues(new Uint8Array(4096)),
      "empty.txt": new Uint8Array(0),
      "ünï/cödé.md": strToU8("unicode path"),
    };
    const name = uniq();
    const res = await upload(BASE, { metadata: JSON.stringify({ name }), archive: zip(files) });
    expect(res.status).toBe(201);
    const out = await pull(name, "?format=zip");
    expect(out.status).toBe(200);
    expect(out.headers.get("content-type")).toBe("application/zip");
    expect(out.headers.get("content-disposition")).toMatch(/attachment; filename=".+-v1\.zip"/);
    const back = unzipSync(new Uint8Array(await out.arrayBuffer()));
    expect(Object.keys(back).sort()).toEqual(Object.keys(files).sort());
    for (const [path, data] of Object.entries(files)) expect([...back[path]], path).toEqual([...data]);
  });

  it("refuses missing or broken metadata with 400", async () => {
    const archive = zip({ "a.md": strToU8("a") });
    await leavesNothing(async (key) => {
      await expectError(await upload(BASE, { archive }, key), 400, /metadata: is required/);
      await expectError(await upload(BASE, { metadata: "{nope", archive }, key), 400, /metadata: is not valid JSON/);
      await expectError(await upload(BASE, { metadata: "[1]", archive }, key), 400, /metadata: must be a JSON object/);
      await expectError(await upload(BASE, { metadata: JSON.stringify({ provider: "x" }), archive }, key), 400, /metadata\.name: is required/);
      await expectError(await upload(BASE, { metadata: "{}", json: "{}", archive }, key), 400, /give the metadata once/);
      await expectError(await upload(BASE, { metadata: JSON.stringify({ name: uniq() }), archive, zip: archive }, key), 400, /send one ZIP archive/);
    });
  });

  it("refuses what is not a ZIP, bad entry paths and duplicate entries with 400", async () => {
    const meta = () => JSON.stringify({ name: uniq() });
    // fflate writes names as given, so a hostile archive is easy to make.
    await leavesNothing(async (key) => {
      await expectError(await upload(BASE, { metadata: meta(), archive: strToU8("not a zip at all") }, key), 400, /archive: is not a ZIP archive/);
      await expectError(await upload(BASE, { metadata: meta(), archive: zip({ "../evil.sh": strToU8("x") }) }, key), 400, /archive: \.\.\/evil\.sh: must not contain \.\./);
      await expectError(await upload(BASE, { metadata: meta(), archive: zip({ "/etc/x": strToU8("x") }) }, key), 400, /must be relative/);
      await expectError(await upload(BASE, { metadata: meta(), archive: zip({ "a\\b": strToU8("x") }) }, key), 400, /backslashes/);
      await expectError(await upload(BASE, { metadata: meta(), archive: zip({ "a.md": strToU8("x"), "./a.md": strToU8("y") }) }, key), 400, /duplicates/);
    });
  });

  it("refuses a truncated archive with 400 and stores nothing, wherever it was cut", async () => {
    const whole = zip({ "one.md": strToU8("one"), "two.md": strToU8("two"), "three.md": strToU8("three") });
    await leavesNothing(async (key) => {
      for (const cut of [137, whole.length - 40, whole.length - 5]) {
        await expectError(await upload(BASE, { metadata: JSON.stringify({ name: uniq() }), archive: whole.subarray(0, cut) }, key), 400, /archive: is not a (complete|valid) ZIP archive/);
      }
    });
  });

  it("checks the zip-bomb limits while inflating: files over 5 MiB, over 1,000 files (413), a bomb's ratio (400)", async () => {
    const meta = () => JSON.stringify({ name: uniq() });
    const random = (size: number) => {
      const out = new Uint8Array(size);
      for (let at = 0; at < size; at += 65536) crypto.getRandomValues(out.subarray(at, Math.min(size, at + 65536)));
      return out;
    };
    const fiveMiB = random(5 * MiB);
    expect((await upload(BASE, { metadata: meta(), archive: zip({ "big.bin": [fiveMiB, { level: 0 }] } as Zippable) })).status).toBe(201);
    const thousand = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}.md`, strToU8("x")]));
    expect((await upload(BASE, { metadata: meta(), archive: zip(thousand) })).status).toBe(201);
    await leavesNothing(async (key) => {
      const tooBig = random(5 * MiB + 1);
      await expectError(await upload(BASE, { metadata: meta(), archive: zip({ "big.bin": [tooBig, { level: 0 }] } as Zippable) }, key), 413, /big\.bin is larger than 5 MiB/);
      await expectError(await upload(BASE, { metadata: meta(), archive: zip({ ...thousand, extra: strToU8("x") }) }, key), 413, /more than 1000 files/);
      const bomb = zip({ "zeros.txt": new Uint8Array(4 * MiB) });
      await expectError(await upload(BASE, { metadata: meta(), archive: bomb }, key), 400, /zip bomb/);
    });
  });

  it("caps the multipart body at SKILL_UPLOAD_MAX_BYTES, by Content-Length and while streaming (413)", async () => {
    const fd = form({ metadata: JSON.stringify({ name: uniq() }), archive: zipSync({ "a.txt": crypto.getRandomValues(new Uint8Array(2000)) }, { level: 0 }) });
    const sized = new Request(`http://api.test${BASE}`, { method: "POST", headers: { "X-API-KEY": ws.key }, body: fd });
    const bytes = new Uint8Array(await sized.clone().arrayBuffer());
    const contentType = sized.headers.get("content-type")!;
    const streamed = (key: string) => {
      const { readable, writable } = new TransformStream();
      const w = writable.getWriter();
      // The server stops reading at the limit, so later writes fail: that is expected.
      void (async () => {
        for (let at = 0; at < bytes.length; at += 500) await w.write(bytes.slice(at, at + 500));
        await w.close();
      })().catch(() => {});
      return new Request(`http://api.test${BASE}`, { method: "POST", headers: { "X-API-KEY": key, "Content-Type": contentType }, body: readable, duplex: "half" } as RequestInit);
    };
    await leavesNothing(async (key) => {
      const withLength = new Request(`http://api.test${BASE}`, { method: "POST", headers: { "X-API-KEY": key, "Content-Type": contentType }, body: bytes });
      await expectError(await withVars({ SKILL_UPLOAD_MAX_BYTES: String(bytes.length - 1) }, withLength), 413, /larger than/);
      await expectError(await withVars({ SKILL_UPLOAD_MAX_BYTES: String(bytes.length - 1) }, streamed(key)), 413, /larger than/);
    });
    expect((await withVars({ SKILL_UPLOAD_MAX_BYTES: String(bytes.length) }, streamed(ws.key))).status).toBe(201);
  });
});

describe("POST /skill-collections/{identifier}/versions", () => {
  async function collection(files: Record<string, string> = { "a/SKILL.md": "A", "a/ref.md": "R", "b.md": "B" }) {
    const name = uniq();
    const b = await created({ name, provider: "claude_code", files: Object.entries(files).map(([path, content]) => ({ path, content })) });
    return { name, id: b.skill_collection.id as string };
  }

  it("applies file_updates, moves (old_path/new_path or from/to) and deletes: 201 with the version", async () => {
    const c = await collection();
    const res = await saveVersion(c.name, {
      file_updates: [{ path: "new.md", content: "N" }, { path: "b.md", content: "B2" }],
      moves: [{ old_path: "a/ref.md", new_path: "docs/ref.md" }],
      deletes: ["a/SKILL.md"],
      commit_message: "second",
    });
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(201);
    expect(b.success).toBe(true);
    expect(b.version).toMatchObject({
      skill_collection_id: c.id,
      number: 2,
      file_paths: ["b.md", "docs/ref.md", "new.md"],
      commit_message: "second",
      release_label: null,
      provider: "claude_code",
      user_email: ws.email,
      created_by: ws.userId,
    });
    expect((await pulled(c.id)).files).toEqual({ "b.md": "B2", "docs/ref.md": "R", "new.md": "N" });
    const folderMove = await json(await saveVersion(c.id, { moves: [{ from: "docs", to: "reference" }] }));
    expect(folderMove.version.file_paths).toEqual(["b.md", "new.md", "reference/ref.md"]);
    // Older versions stay as they were.
    expect((await pulled(c.id, "?version=1")).files).toEqual({ "a/SKILL.md": "A", "a/ref.md": "R", "b.md": "B" });
  });

  it("stores an unchanged file once across versions (content-addressed)", async () => {
    const w = await createWorkspace();
    const name = uniq();
    await created({ name, files: [{ path: "a", content: "same" }, { path: "b", content: "same" }, { path: "c", content: "other" }] }, w.key);
    expect(await blobCount(w.workspaceId)).toBe(2);
    await json(await saveVersion(name, { file_updates: [{ path: "d", content: "other" }], moves: [{ from: "a", to: "z" }] }, w.key));
    expect(await blobCount(w.workspaceId)).toBe(2);
    await json(await saveVersion(name, { file_updates: [{ path: "e", content: "third" }] }, w.key));
    expect(await blobCount(w.workspaceId)).toBe(3);
  });

  it("refuses a move from a missing path, a delete of a missing path and bad paths (400), saving nothing", async () => {
    const c = await collection();
    const bad: [unknown, RegExp][] = [
      [{ moves: [{ old_path: "nope.md", new_path: "x.md" }] }, /moves\[0\]\.old_path: nope\.md does not exist/],
      [{ moves: [{ from: "b.md" }] }, /moves\[0\]\.new_path: is required/],
      [{ moves: [{ old_path: "b.md", new_path: "a/ref.md" }] }, /already exists/],
      [{ deletes: ["nope.md"] }, /deletes\[0\]: nope\.md does not exist/],
      [{ deletes: ["b.md", "b.md"] }, /deletes\[1\]: duplicates deletes\[0\]/],
      [{ file_updates: [{ path: "../x", content: "" }] }, /file_updates\[0\]\.path: must not contain \.\./],
      [{ file_updates: [{ path: "x" }, { path: "x" }] }, /duplicates/],
      [{ provider: "cursor" }, /provider: must be one of/],
      [{ release_label: "" }, /release_label: must not be empty/],
      [{ deletes: Array.from({ length: 1001 }, (_, i) => `x${i}`) }, /deletes: must have at most 1000 items/],
    ];
    for (const [body, message] of bad) await expectError(await saveVersion(c.name, body), 400, message);
    const after = await pulled(c.name);
    expect(after.version.number).toBe(1);
  });

  it("moves a release label to the new version; pulls by label and by version", async () => {
    const c = await collection({ "a.md": "v1" });
    const v2 = await json(await saveVersion(c.name, { file_updates: [{ path: "a.md", content: "v2" }], release_label: "prod" }));
    expect(v2.version).toMatchObject({ number: 2, release_label: "prod" });
    expect((await pulled(c.name, "?label=prod")).files).toEqual({ "a.md": "v2" });
    const v3 = await json(await saveVersion(c.name, { file_updates: [{ path: "a.md", content: "v3" }], release_label: "staging" }));
    expect(v3.version.release_label).toBe("staging");
    const v4 = await json(await saveVersion(c.name, { file_updates: [{ path: "a.md", content: "v4" }], release_label: "prod" }));
    expect(v4.version.number).toBe(4);
    const byLabel = await pulled(c.name, "?label=prod");
    expect(byLabel.version).toMatchObject({ number: 4, release_label: "prod" });
    expect(byLabel.files).toEqual({ "a.md": "v4" });
    expect((await pulled(c.name, "?version=2")).version.release_label).toBeNull();
    expect((await pulled(c.name, "?label=staging")).version.number).toBe(3);
    // Another collection's label of the same name is its own.
    const d = await collection({ "d.md": "d" });
    await json(await saveVersion(d.name, { release_label: "prod" }));
    expect((await pulled(c.name, "?label=prod")).version.number).toBe(4);
  });

  it("takes the provider the SDK may send, and keeps the collection's when absent", async () => {
    const c = await collection({ "a.md": "a" });
    const v2 = await json(await saveVersion(c.name, { provider: "openclaw", commit_message: "switch" }));
    expect(v2.version.provider).toBe("openclaw");
    expect(v2.skill_collection.provider).toBe("openclaw");
    const v3 = await json(await saveVersion(c.name, { commit_message: "keep" }));
    expect(v3.version.provider).toBe("openclaw");
    expect(v3.version.file_paths).toEqual(["a.md"]);
  });

  it("with a ZIP (multipart), replaces the contents; metadata carries the rest", async () => {
    const c = await collection({ "old.md": "old" });
    const res = await upload(`${BASE}/${enc(c.name)}/versions`, {
      metadata: JSON.stringify({ commit_message: "from zip", release_label: "prod" }),
      archive: zipSync({ "new/SKILL.md": strToU8("new") }),
    });
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(201);
    expect(b.version).toMatchObject({ number: 2, file_paths: ["new/SKILL.md"], commit_message: "from zip", release_label: "prod" });
    expect((await pulled(c.name)).files).toEqual({ "new/SKILL.md": "new" });
    // No metadata at all is fine for a version.
    expect((await upload(`${BASE}/${enc(c.name)}/versions`, { archive: zipSync({ "x.md": strToU8("x") }) })).status).toBe(201);
  });

  it("saves concurrent versions with distinct numbers, none lost", async () => {
    const c = await collection({ "a.md": "a" });
    const results = await Promise.all([1, 2, 3].map((i) => saveVersion(c.name, { file_updates: [{ path: `f${i}.md`, content: String(i) }] })));
    const bodies = await Promise.all(results.map((r) => json(r)));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(bodies.map((b) => b.version.number).sort()).toEqual([2, 3, 4]);
    expect(Object.keys((await pulled(c.name)).files).sort()).toEqual(["a.md", "f1.md", "f2.md", "f3.md"]);
  });

  it("answers 404 for an unknown collection and for another workspace's", async () => {
    const c = await collection();
    await expectError(await saveVersion("no-such-collection", { commit_message: "x" }), 404, /skill collection not found/);
    await expectError(await saveVersion(c.id, { commit_message: "x" }, other.key), 404, /not found/);
    await expectError(await saveVersion(c.name, { commit_message: "x" }, other.key), 404, /not found/);
    expect((await pulled(c.id)).version.number).toBe(1);
  });
});

describe("PATCH /skill-collections/{identifier}", () => {
  it("renames without a new version: 200 with the collection; root_path stays", async () => {
    const name = uniq("Before Rename");
    const c = await created({ name, files: [{ path: "a.md", content: "a" }] });
    const newName = uniq("renamed");
    const res = await call(`${BASE}/${enc(name)}`, { method: "PATCH", key: ws.key, json: { name: newName } });
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(200);
    expect(b).toEqual({ success: true, skill_collection: { ...c.skill_collection, name: newName, updated_at: expect.any(String) } });
    const got = await pulled(newName);
    expect(got.version.number).toBe(1);
    expect(got.skill_collection.root_path).toBe(c.skill_collection.root_path);
    await expectError(await pull(name), 404, /not found/);
    expect((await pulled(c.skill_collection.root_path)).skill_collection.id).toBe(c.skill_collection.id);
  });

  it("answers 409 for a taken name, 400 for a bad one, 200 unchanged for null or the same name", async () => {
    const a = await created({ name: uniq() });
    const b = await created({ name: uniq() });
    const patch = (body: unknown, id = a.skill_collection.id, key = ws.key) => call(`${BASE}/${id}`, { method: "PATCH", key, json: body });
    await expectError(await patch({ name: b.skill_collection.name }), 409, /already exists/);
    await expectError(await patch({ name: "" }), 400, /name: must not be empty/);
    for (const body of [{ name: null }, {}, { name: a.skill_collection.name }]) {
      const res = await patch(body);
      expect(res.status).toBe(200);
      expect((await json(res)).skill_collection).toEqual(a.skill_collection);
    }
    await expectError(await patch({ name: uniq() }, a.skill_collection.id, other.key), 404, /not found/);
    await expectError(await patch({ name: uniq() }, crypto.randomUUID()), 404, /not found/);
  });
});

describe("GET /skill-collections/{identifier}", () => {
  it("finds a collection by UUID, by name, and by root_path (percent-encoded, with /)", async () => {
    const name = uniq("Team/Refunds");
    const c = await created({ name, files: [{ path: "a.md", content: "a" }] });
    const root = c.skill_collection.root_path;
    expect(root).toContain("/");
    for (const identifier of [c.skill_collection.id, c.skill_collection.id.toUpperCase(), name, root, `/${root}`]) {
      const got = await pulled(identifier);
      expect(got.skill_collection.id, identifier).toBe(c.skill_collection.id);
    }
    const raw = await call(`${BASE}/${root.replace("/", "%2F")}`, { key: ws.key });
    expect(raw.status).toBe(200);
  });

  it("finds names with characters that need percent-encoding", async () => {
    const stem = uniq("n");
    for (const suffix of [" a b", "+plus", " 100%", "%2Fliteral", "?q=1", "#hash", " ünï", "/slash", "\\back"]) {
      const name = `${stem}${suffix}`;
      const c = await created({ name });
      const got = await pulled(name);
      expect(got.skill_collection.id, name).toBe(c.skill_collection.id);
      const res = await saveVersion(name, { commit_message: "x" });
      expect(res.status, name).toBe(201);
    }
  });

  it("answers the collection, the newest version and the files; version=N and label=L select others", async () => {
    const name = uniq();
    await created({ name, files: [{ path: "a.md", content: "1" }] });
    await json(await saveVersion(name, { file_updates: [{ path: "a.md", content: "2" }], release_label: "prod" }));
    await json(await saveVersion(name, { file_updates: [{ path: "a.md", content: "3" }] }));
    const latest = await pulled(name);
    expect(Object.keys(latest)).toEqual(["success", "skill_collection", "version", "files"]);
    expect(latest.version.number).toBe(3);
    expect(latest.files).toEqual({ "a.md": "3" });
    expect((await pulled(name, "?version=1")).files).toEqual({ "a.md": "1" });
    expect((await pulled(name, "?label=prod")).files).toEqual({ "a.md": "2" });
    expect((await pulled(name, "?format=json")).version.number).toBe(3);
    const zipped = await pull(name, "?format=zip&version=2");
    expect(unzipSync(new Uint8Array(await zipped.arrayBuffer()))["a.md"]).toEqual(strToU8("2"));
  });

  it("refuses bad selectors with 400 and unknown versions or labels with 404", async () => {
    const name = uniq();
    await created({ name });
    await expectError(await pull(name, "?version=1&label=prod"), 400, /version: give version or label, not both/);
    await expectError(await pull(name, "?version=0"), 400, /version: must be a positive integer/);
    await expectError(await pull(name, "?version=abc"), 400, /version: must be a positive integer/);
    await expectError(await pull(name, "?format=tar"), 400, /format: must be zip or json/);
    await expectError(await pull(name, "?version=2"), 404, /version 2 of the skill collection not found/);
    await expectError(await pull(name, "?label=nope"), 404, /release label "nope"/);
  });

  it("answers 404 for an unknown identifier and for another workspace's collection", async () => {
    const c = await created({ name: uniq() });
    await expectError(await pull("no-such-thing"), 404, /skill collection not found/);
    await expectError(await pull(crypto.randomUUID()), 404, /skill collection not found/);
    for (const id of [c.skill_collection.id, c.skill_collection.name, c.skill_collection.root_path]) {
      await expectError(await pull(id, "", other.key), 404, /not found/);
      await expectError(await pull(id, "?format=zip", other.key), 404, /not found/);
    }
  });

  it("shows non-UTF-8 bytes as replacement characters in JSON, exact bytes in the ZIP", async () => {
    const name = uniq();
    const bytes = new Uint8Array([0x61, 0xff, 0x62]);
    expect((await upload(BASE, { metadata: JSON.stringify({ name }), archive: zipSync({ "b.bin": bytes }) })).status).toBe(201);
    expect((await pulled(name)).files["b.bin"]).toBe("a\ufffdb");
    const zipped = unzipSync(new Uint8Array(await (await pull(name, "?format=zip")).arrayBuffer()));
    expect([...zipped["b.bin"]]).toEqual([...bytes]);
  });
});

describe("GET /skill-collections", () => {
  it("lists the workspace's collections, newest first, never another workspace's", async () => {
    const w = await createWorkspace();
    const a = await created({ name: uniq("a") }, w.key);
    const b = await created({ name: uniq("b") }, w.key);
    await created({ name: uniq("elsewhere") }, other.key);
    const res = await call(BASE, { key: w.key });
    const body = await json(res);
    expect(res.status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.skill_collections.map((c: any) => c.id)).toEqual([b.skill_collection.id, a.skill_collection.id]);
    expect(body.skill_collections[0]).toEqual(b.skill_collection);
  });

  it("sorts by name, id, created_at or updated_at, either way; filters by dates and creator", async () => {
    const w = await createWorkspace();
    const names = ["b-col", "a-col", "c-col"];
    const made = [];
    for (const name of names) made.push((await created({ name }, w.key)).skill_collection);
    const list = async (q: string) => {
      const res = await call(`${BASE}?${q}`, { key: w.key });
      const b = await json(res);
      expect(res.status, JSON.stringify(b)).toBe(200);
      return b.skill_collections.map((c: any) => c.name);
    };
    expect(await list("sort_by=name&sort_order=asc")).toEqual(["a-col", "b-col", "c-col"]);
    expect(await list("sort_by=name")).toEqual(["c-col", "b-col", "a-col"]);
    expect(await list("sort_by=created_at&sort_order=asc")).toEqual(names);
    expect(await list("sort_by=id&sort_order=asc")).toEqual([...made].sort((x, y) => (x.id < y.id ? -1 : 1)).map((c) => c.name));
    await json(await saveVersion("b-col", { commit_message: "touch" }, w.key));
    expect((await list("sort_by=updated_at"))[0]).toBe("b-col");
    expect(await list(`created_after=${encodeURIComponent(made[1].created_at)}&sort_by=created_at&sort_order=asc`)).toEqual(["a-col", "c-col"]);
    expect(await list(`created_before=${encodeURIComponent(made[1].created_at)}&sort_by=created_at&sort_order=asc`)).toEqual(["b-col", "a-col"]);
    expect(await list(`updated_after=${encodeURIComponent(made[2].updated_at)}&sort_by=name&sort_order=asc`)).toEqual(["b-col", "c-col"]);
    expect(await list("updated_before=2000-01-01")).toEqual([]);
    expect((await list(`created_by_email=${encodeURIComponent(w.email)}`)).length).toBe(3);
    expect(await list("created_by_email=nobody%40example.test")).toEqual([]);
    await expectError(await call(`${BASE}?sort_by=size`, { key: w.key }), 400, /sort_by: must be created_at, updated_at, name or id/);
    await expectError(await call(`${BASE}?sort_order=up`, { key: w.key }), 400, /sort_order: must be asc or desc/);
    await expectError(await call(`${BASE}?created_after=yesterday`, { key: w.key }), 400, /created_after/);
  });
});

async function newFolder(key: string, parent_id?: number): Promise<number> {
  const res = await call("/api/public/v2/folders", { method: "POST", key, json: { name: uniq("folder"), parent_id } });
  expect(res.status).toBe(201);
  return (await json(res)).folder.id;
}

describe("external IDs of skill collections", () => {
  const ext = (id: string) => `${BASE}/${id}/external-ids`;

  it("takes external_ids on create (repeats once), and shows them on create, pull, list and version answers", async () => {
    const pair = { source: "crm", external_id: uniq("x") };
    const b = await created({ name: uniq(), external_ids: [pair, pair] });
    expect(b.external_ids).toEqual([pair]);
    expect(b.skill_collection.external_ids).toEqual([pair]);
    const id = b.skill_collection.id;
    expect((await pulled(id)).skill_collection.external_ids).toEqual([pair]);
    expect((await json(await saveVersion(id, { commit_message: "x" }))).skill_collection.external_ids).toEqual([pair]);
    const listed = await json(await call(`${BASE}?external_source=crm&external_id=${pair.external_id}`, { key: ws.key }));
    expect(listed.skill_collections).toEqual([expect.objectContaining({ id, external_ids: [pair] })]);
    expect(await json(await call(ext(id), { key: ws.key }))).toEqual({ success: true, external_ids: [pair] });
  });

  it("makes a create whose mapping another collection holds a 409 that creates nothing", async () => {
    const w = await createWorkspace();
    const pair = { source: "crm", external_id: "taken" };
    await created({ name: uniq(), files: [{ path: "a", content: "first" }], external_ids: [pair] }, w.key);
    const before = { rows: await rowCount(w.workspaceId), blobs: await blobCount(w.workspaceId) };
    await expectError(await create({ name: uniq(), files: [{ path: "b", content: "second" }], external_ids: [pair] }, w.key), 409, /already attached/);
    const fd = form({ metadata: JSON.stringify({ name: uniq(), external_ids: [pair] }), archive: zipSync({ c: strToU8("third") }) });
    await expectError(await call(BASE, { method: "POST", key: w.key, body: fd }), 409, /already attached/);
    expect({ rows: await rowCount(w.workspaceId), blobs: await blobCount(w.workspaceId) }).toEqual(before);
    // The same mapping in another workspace is no conflict.
    await created({ name: uniq(), external_ids: [pair] }, other.key);
    await expectError(await create({ name: uniq(), external_ids: [{ source: "", external_id: "x" }] }), 400, /external_ids\[0\]\.source/);
  });

  it("attaches (201, idempotent; 409 on another collection), lists and detaches through /{skill_collection_id}/external-ids", async () => {
    const a = (await created({ name: uniq() })).skill_collection.id;
    const b = (await created({ name: uniq() })).skill_collection.id;
    const pair = { source: "s/rc", external_id: uniq("a/b%c") };
    for (let i = 0; i < 2; i++) {
      const res = await call(ext(a), { method: "POST", key: ws.key, json: pair });
      expect(res.status).toBe(201);
      expect(await json(res)).toEqual({ success: true, external_id: pair });
    }
    await expectError(await call(ext(b), { method: "POST", key: ws.key, json: pair }), 409, /already attached/);
    expect((await json(await call(ext(a.toUpperCase()), { key: ws.key }))).external_ids).toEqual([pair]);
    const del = `${ext(a)}/${enc(pair.source)}/${enc(pair.external_id)}`;
    expect((await call(del, { method: "DELETE", key: ws.key })).status).toBe(200);
    await expectError(await call(del, { method: "DELETE", key: ws.key }), 404, /not found/);
    expect((await call(ext(b), { method: "POST", key: ws.key, json: pair })).status).toBe(201);
  });

  it("is 404 for another workspace's collection or an unknown UUID, 400 for an id that is not a UUID", async () => {
    const theirs = (await created({ name: uniq() }, other.key)).skill_collection;
    await expectError(await call(ext(theirs.id), { method: "POST", key: ws.key, json: { source: "a", external_id: "b" } }), 404, /skill collection not found/);
    await expectError(await call(ext(theirs.id), { key: ws.key }), 404, /not found/);
    await expectError(await call(`${ext(theirs.id)}/a/b`, { method: "DELETE", key: ws.key }), 404, /not found/);
    await expectError(await call(ext(crypto.randomUUID()), { key: ws.key }), 404, /not found/);
    await expectError(await call(ext(enc(theirs.name)), { key: other.key }), 400, /must be a UUID/);
  });

  it("looks a collection up on the list; an unknown mapping finds nothing; one parameter alone is a 400", async () => {
    const pair = { source: "gh", external_id: uniq("lookup") };
    const a = (await created({ name: uniq(), external_ids: [pair] })).skill_collection.id;
    const q = `external_source=gh&external_id=${pair.external_id}`;
    expect((await json(await call(`${BASE}?${q}`, { key: ws.key }))).skill_collections.map((c: any) => c.id)).toEqual([a]);
    expect((await json(await call(`${BASE}?external_source=gh&external_id=nope`, { key: ws.key }))).skill_collections).toEqual([]);
    expect((await json(await call(`${BASE}?${q}`, { key: other.key }))).skill_collections).toEqual([]);
    await expectError(await call(`${BASE}?external_source=gh`, { key: ws.key }), 400, /external_id: is required with external_source/);
  });
});

describe("skill collections in folders", () => {
  it("creates a collection in a folder, lists by folder, and shows it in the folder's entities", async () => {
    const w = await createWorkspace();
    const f = await newFolder(w.key);
    const g = await newFolder(w.key);
    const inF = await created({ name: uniq("in-f"), folder_id: f }, w.key);
    expect(inF.skill_collection.folder_id).toBe(f);
    await created({ name: uniq("in-g"), folder_id: g }, w.key);
    await created({ name: uniq("root") }, w.key);
    const byFolder = await json(await call(`${BASE}?folder_id=${f}`, { key: w.key }));
    expect(byFolder.skill_collections.map((c: any) => c.id)).toEqual([inF.skill_collection.id]);
    expect((await json(await call(BASE, { key: w.key }))).skill_collections).toHaveLength(3);
    const entities = await json(await call(`/api/public/v2/folders/entities?folder_id=${f}&filter_type=SKILL_COLLECTION`, { key: w.key }));
    expect(entities.entities.map((e: any) => [e.type, e.id, e.name])).toEqual([["SKILL_COLLECTION", inF.skill_collection.id, inF.skill_collection.name]]);
    // Publishing into a folder works from a ZIP too.
    const res = await call(BASE, { method: "POST", key: w.key, body: form({ json: JSON.stringify({ name: uniq(), folder_id: g }), files: zipSync({ a: strToU8("a") }) }) });
    expect((await json(res)).skill_collection.folder_id).toBe(g);
  });

  it("answers 404 for an unknown folder or another workspace's, on create and on the list filter, creating nothing", async () => {
    const theirs = await newFolder(other.key);
    await leavesNothing(async (key) => {
      await expectError(await create({ name: uniq(), folder_id: theirs, files: [{ path: "a", content: "a" }] }, key), 404, /folder_id: folder \d+ not found/);
      await expectError(await create({ name: uniq(), folder_id: 99999999 }, key), 404, /folder_id/);
      await expectError(await call(`${BASE}?folder_id=${theirs}`, { key }), 404, /folder_id/);
    });
    await expectError(await create({ name: uniq(), folder_id: 0 }), 400, /folder_id: must be a positive integer/);
    await expectError(await call(`${BASE}?folder_id=abc`, { key: ws.key }), 400, /folder_id/);
  });
});
