// Template reads served from the edge cache (src/prompts/cache.ts) through the real Worker and the
// runtime's caches.default (which works in the local runtime): every change that purges, the proof
// that keeps pinned reads exact when nothing purged (a write that went through another data centre is
// played here by writing to D1 directly), the TTL bound, no-cache and bookmarks, isolation, revoked keys.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { getDb } from "../../src/db/client";
import { BOOKMARK_HEADER } from "../../src/db/sessions";
import { readTemplateVersion, TEMPLATE_READ_FORMAT } from "../../src/services/registry/prompt-templates";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

let ws: TestKey;
let other: TestKey;
const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const completion = (text: string) => ({ type: "completion", content: [{ type: "text", text }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function publish(key: string, name: string, text: string, extra: Record<string, unknown> = {}) {
  const res = await call("/rest/prompt-templates", { method: "POST", key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: completion(text) }, ...extra } });
  expect(res.status).toBe(200);
  return json(res);
}

interface Read {
  status: number;
  state: string | null;
  body: any;
  text: string | undefined;
  res: Response;
}

async function asRead(res: Response): Promise<Read> {
  const body = await json(res);
  return { status: res.status, state: res.headers.get("X-PromptEdge-Cache"), body, text: body.prompt_template?.content?.[0]?.text, res };
}

/** GET /prompt-templates/{identifier}, as the Worker answers it. */
const get = async (key: string, identifier: string | number, query = "", headers: Record<string, string> = {}) =>
  asRead(await call(`/prompt-templates/${encodeURIComponent(String(identifier))}${query}`, { key, headers }));

/** The same through an app of its own, with settings of the test's (the same caches.default). */
async function getWith(settings: Record<string, string>, key: string, identifier: string | number, query = "") {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(new Request(`http://api.test/prompt-templates/${encodeURIComponent(String(identifier))}${query}`, { headers: { "X-API-KEY": key } }), { ...env, ...settings }, ctx);
  const read = await asRead(res);
  await waitOnExecutionContext(ctx);
  return read;
}

/** A new version written straight into D1, as a publish through another data centre would be: nothing here is purged. */
async function versionBehindTheCache(templateId: number, text: string) {
  const session = env.DB.withSession("first-primary");
  await session
    .prepare(
      "INSERT INTO prompt_versions (workspace_id, prompt_id, version, prompt_template) SELECT workspace_id, id, (SELECT coalesce(max(version), 0) + 1 FROM prompt_versions WHERE prompt_id = ?1), ?2 FROM prompt_templates WHERE id = ?1",
    )
    .bind(templateId, JSON.stringify(completion(text)))
    .run();
  return session.getBookmark()!;
}

/**
 * Reads until `done` holds of a read: a miss keeps what it read after its answer (waitUntil), so the
 * hit that follows it may take a few reads. Two seconds at most.
 */
async function until(read: () => Promise<Read>, done: (r: Read) => boolean): Promise<Read> {
  for (let i = 0; ; i++) {
    const r = await read();
    if (done(r) || i === 100) return r;
    await sleep(20);
  }
}

/** Reads until the cache answers: what later reads are checked against. */
async function cached(read: () => Promise<Read>): Promise<Read> {
  const hit = await until(read, (r) => r.state === "hit");
  expect(hit.state).toBe("hit");
  return hit;
}

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

describe("served from the edge cache", () => {
  it("a second read is a hit, answered exactly as the miss was (headers too, but for the request id and the cache header)", async () => {
    const name = uniq("same");
    await publish(ws.key, name, "Hello {name}", { release_labels: ["prod"], prompt_version: { prompt_template: completion("Hello {name}"), metadata: { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.1 } } } } });
    const comparable = (r: Read) => [...r.res.headers].filter(([k]) => !["x-request-id", "x-promptedge-cache", BOOKMARK_HEADER.toLowerCase()].includes(k));
    for (const query of ["", "?label=prod", "?version=1"]) {
      const miss = await get(ws.key, name, query);
      const hit = await cached(() => get(ws.key, name, query));
      expect(miss.state).toBe("miss");
      expect(hit.body).toEqual(miss.body);
      expect(comparable(hit)).toEqual(comparable(miss));
      expect(hit.res.headers.get(BOOKMARK_HEADER)).toMatch(/^DB=[0-9a-f-]+$/);
    }
    // The SDK's POST: variables and run()'s overrides are applied per request, after the cache.
    const post = (body: unknown) => call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, json: body }).then(asRead);
    const a = await post({ label: "prod", input_variables: { name: "Ada" } });
    const b = await post({ label: "prod", input_variables: { name: "Grace" }, model: "gpt-4o-mini", model_parameter_overrides: { temperature: 0.9 } });
    expect([a.state, b.state]).toEqual(["hit", "hit"]);
    expect(a.text).toBe("Hello Ada");
    expect(b.text).toBe("Hello Grace");
    expect(b.body.metadata.model).toMatchObject({ name: "gpt-4o-mini", parameters: { temperature: 0.9 } });
    expect(b.body.llm_kwargs).toMatchObject({ model: "gpt-4o-mini", temperature: 0.9 });
    // Nothing of one request's rendering stays in the cache.
    expect((await get(ws.key, name, "?label=prod")).text).toBe("Hello {name}");
  });

  it("/openapi.json states the bound on both reads and names the header", async () => {
    const doc = await json(await call("/openapi.json"));
    for (const method of ["get", "post"]) {
      const op = doc.paths["/prompt-templates/{identifier}"][method];
      expect(op.description).toContain("PROMPT_CACHE_TTL_MS old (5 s by default)");
      expect(op.responses["200"].headers["X-PromptEdge-Cache"].schema.enum).toEqual(["hit", "miss", "bypass"]);
    }
  });

  it("keys entries by the read's shape: a new shape needs a new TEMPLATE_READ_FORMAT", async () => {
    const name = uniq("shape");
    await publish(ws.key, name, "x");
    const read = await readTemplateVersion(getDb(env.DB), ws.workspaceId, name, {});
    const shape = { read: Object.keys(read).sort(), t: Object.keys(read.t).sort(), v: Object.keys(read.v).sort() };
    // A deployment reads the entries the previous one kept, for up to a day: when this fails, change
    // TEMPLATE_READ_FORMAT (src/services/registry/prompt-templates.ts), then the expected shape here.
    expect({ format: TEMPLATE_READ_FORMAT, shape }).toEqual({
      format: "template-version-2",
      shape: {
        read: ["dependencies", "expanded", "p", "snippets", "t", "v"],
        t: ["cacheGeneration", "createdAt", "createdBy", "folderId", "id", "name", "tags", "updatedAt", "workspaceId"],
        v: ["commitMessage", "createdAt", "createdBy", "id", "metadata", "promptId", "promptTemplate", "version", "workspaceId"],
      },
    });
  });

  it("404s are not kept: a template published after one is found at once", async () => {
    const name = uniq("later");
    expect((await get(ws.key, name)).status).toBe(404);
    await publish(ws.key, name, "now");
    expect((await get(ws.key, name)).text).toBe("now");
  });
});

describe("label and latest reads are purged in this data centre before a change answers", () => {
  it("publish: the latest version and a label it moves are read fresh", async () => {
    const name = uniq("pub");
    await publish(ws.key, name, "one", { release_labels: ["prod"] });
    await cached(() => get(ws.key, name));
    await cached(() => get(ws.key, name, "?label=prod"));
    await publish(ws.key, name, "two", { release_labels: ["prod"] });
    expect(await get(ws.key, name)).toMatchObject({ state: "miss", text: "two" });
    expect(await get(ws.key, name, "?label=prod")).toMatchObject({ state: "miss", text: "two" });
  });

  it("label move, create and delete: the label's read and the versions' release_labels follow at once", async () => {
    const name = uniq("labels");
    const t = await publish(ws.key, name, "one");
    await publish(ws.key, name, "two");
    const created = await call(`/prompts/${t.id}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 1, name: "prod" } });
    const label = await json(created);
    expect((await cached(() => get(ws.key, name, "?label=prod"))).text).toBe("one");
    expect((await cached(() => get(ws.key, name, "?version=1"))).body.release_labels).toEqual(["prod"]);
    expect((await cached(() => get(ws.key, name))).body.release_labels).toEqual([]);

    expect((await call(`/prompt-labels/${label.id}`, { method: "PATCH", key: ws.key, json: { prompt_version_number: 2 } })).status).toBe(200);
    expect(await get(ws.key, name, "?label=prod")).toMatchObject({ state: "miss", text: "two" });
    expect((await get(ws.key, name, "?version=1")).body.release_labels).toEqual([]);
    expect((await get(ws.key, name)).body.release_labels).toEqual(["prod"]);

    await cached(() => get(ws.key, name));
    expect((await call(`/prompts/${t.id}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 2, name: "beta" } })).status).toBe(200);
    expect(await get(ws.key, name)).toMatchObject({ state: "miss", body: { release_labels: ["beta", "prod"] } });

    await cached(() => get(ws.key, name, "?label=prod"));
    expect((await call(`/prompt-labels/${label.id}`, { method: "DELETE", key: ws.key })).status).toBe(204);
    expect((await get(ws.key, name, "?label=prod")).status).toBe(404);
    expect((await get(ws.key, name)).body.release_labels).toEqual(["beta"]);
  });

  it("patch, external IDs and a folder move: what the reads answer changes at once", async () => {
    const name = uniq("patched");
    const t = await publish(ws.key, name, "one");
    await cached(() => get(ws.key, name));
    const patched = await call(`/rest/prompt-templates/${name}`, { method: "PATCH", key: ws.key, json: { content: [{ type: "text", text: "patched" }] } });
    expect(patched.status).toBe(201);
    expect(await get(ws.key, name)).toMatchObject({ state: "miss", text: "patched" });

    await cached(() => get(ws.key, name));
    expect((await call(`/prompt-templates/${t.id}/external-ids`, { method: "POST", key: ws.key, json: { source: "git", external_id: uniq("x") } })).status).toBe(201);
    expect((await get(ws.key, name)).body.external_ids).toHaveLength(1);

    const folder = (await json(await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: uniq("f") } }))).folder;
    await cached(() => get(ws.key, name));
    const moved = await call("/api/public/v2/folders/entities", { method: "POST", key: ws.key, json: { entities: [{ id: t.id, type: "PROMPT" }], folder_id: folder.id } });
    expect(moved.status).toBe(200);
    expect((await get(ws.key, name)).body.folder_id).toBe(folder.id);
  });

  it("rename (upsert by external ID) and delete: the old name and the deleted template are not found", async () => {
    const name = uniq("renamed");
    const renamed = uniq("new-name");
    const ext = uniq("ext");
    const put = (promptName: string, text: string) =>
      call(`/prompt-templates/by-external-id/git/${ext}`, { method: "PUT", key: ws.key, json: { prompt_template: { prompt_name: promptName }, prompt_version: { prompt_template: completion(text) } } });
    const t = await json(await put(name, "one"));
    await cached(() => get(ws.key, name));
    await cached(() => get(ws.key, t.id));
    expect((await put(renamed, "one")).status).toBe(200);
    expect((await get(ws.key, name)).status).toBe(404);
    expect(await get(ws.key, t.id)).toMatchObject({ state: "miss", body: { prompt_name: renamed } });

    await cached(() => get(ws.key, renamed));
    const deleted = await call("/api/public/v2/folders/entities", { method: "DELETE", key: ws.key, json: { entities: [{ id: t.id, type: "PROMPT" }] } });
    expect(deleted.status).toBe(200);
    expect((await get(ws.key, renamed)).status).toBe(404);
    expect((await get(ws.key, t.id)).status).toBe(404);
  });

  it("snippets, nested: a new version of the innermost one, and deleting the middle one, show at once", async () => {
    const leaf = uniq("leaf");
    const mid = uniq("mid");
    const main = uniq("main");
    await publish(ws.key, leaf, "leaf one");
    const m = await publish(ws.key, mid, `[@@@${leaf}@@@]`);
    await publish(ws.key, main, `main @@@${mid}@@@`);
    expect((await cached(() => get(ws.key, main))).text).toBe("main [leaf one]");
    expect((await cached(() => get(ws.key, main, "?version=1"))).text).toBe("main [leaf one]");
    await publish(ws.key, leaf, "leaf two");
    expect(await get(ws.key, main)).toMatchObject({ state: "miss", text: "main [leaf two]" });
    expect(await get(ws.key, main, "?version=1")).toMatchObject({ state: "miss", text: "main [leaf two]" });

    await cached(() => get(ws.key, main));
    await call("/api/public/v2/folders/entities", { method: "DELETE", key: ws.key, json: { entities: [{ id: m.id, type: "PROMPT" }] } });
    expect((await get(ws.key, main)).text).toBe(`main @@@${mid}@@@`);
    expect((await get(ws.key, main, "?version=1")).text).toBe(`main @@@${mid}@@@`);
  });
});

describe("reads pinned to a version are proven against D1 on every hit", () => {
  it("stay cached across unrelated publishes, though they use snippets", async () => {
    const snip = uniq("snip");
    const main = uniq("main");
    const unrelated = uniq("unrelated");
    await publish(ws.key, snip, "S");
    await publish(ws.key, main, `x @@@${snip}@@@ @@@${uniq("nothing")}@@@`);
    await publish(ws.key, unrelated, "u1");
    await cached(() => get(ws.key, main, "?version=1"));
    await publish(ws.key, unrelated, "u2");
    await publish(ws.key, uniq("fresh"), "another new template");
    expect((await get(ws.key, main, "?version=1")).state).toBe("hit");
  });

  it("follow a change nothing purged here: the template's row, a snippet's new version, a snippet name that comes to exist", async () => {
    const snip = uniq("snip");
    const dangling = uniq("not-yet");
    const main = uniq("main");
    const s = await publish(ws.key, snip, "S1");
    const t = await publish(ws.key, main, `@@@${snip}@@@ @@@${dangling}@@@`);
    expect((await cached(() => get(ws.key, main, "?version=1"))).text).toBe(`S1 @@@${dangling}@@@`);

    await env.DB.prepare(`UPDATE prompt_templates SET tags = '["moved"]' WHERE id = ?`).bind(t.id).run();
    expect(await get(ws.key, main, "?version=1")).toMatchObject({ state: "miss", body: { tags: ["moved"] } });

    await cached(() => get(ws.key, main, "?version=1"));
    await versionBehindTheCache(s.id, "S2");
    expect(await get(ws.key, main, "?version=1")).toMatchObject({ state: "miss", text: `S2 @@@${dangling}@@@` });

    await cached(() => get(ws.key, main, "?version=1"));
    await env.DB.prepare("INSERT INTO prompt_templates (workspace_id, name) VALUES (?, ?)").bind(ws.workspaceId, dangling).run();
    const created = (await env.DB.prepare("SELECT id FROM prompt_templates WHERE name = ?").bind(dangling).first<{ id: number }>())!.id;
    await versionBehindTheCache(created, "D");
    expect(await get(ws.key, main, "?version=1")).toMatchObject({ state: "miss", text: "S2 D" });
  });
});

describe("the bound on label and latest reads", () => {
  it("a change nothing purged here is answered stale until PROMPT_CACHE_TTL_MS has passed, then fresh", async () => {
    const name = uniq("ttl");
    const t = await publish(ws.key, name, "one");
    const long = { PROMPT_CACHE_TTL_MS: "600000" };
    await getWith(long, ws.key, name);
    await versionBehindTheCache(t.id, "two");
    // Within the bound: still the version read before.
    expect(await getWith(long, ws.key, name)).toMatchObject({ state: "hit", text: "one" });
    // Past it (a bound of 300 ms, waited out): read again.
    const short = { PROMPT_CACHE_TTL_MS: "300" };
    await sleep(350);
    expect(await getWith(short, ws.key, name)).toMatchObject({ state: "miss", text: "two" });
    expect(await getWith(short, ws.key, name)).toMatchObject({ state: "hit", text: "two" });
    await sleep(350);
    expect((await getWith(short, ws.key, name)).state).toBe("miss");
  });

  it("PROMPT_CACHE_TTL_MS = 0: every label and latest read goes to D1", async () => {
    const name = uniq("off");
    await publish(ws.key, name, "one");
    const off = { PROMPT_CACHE_TTL_MS: "0" };
    await getWith(off, ws.key, name);
    expect((await getWith(off, ws.key, name)).state).toBe("miss");
  });
});

describe("a request can ask for a fresh read", () => {
  it("Cache-Control: no-cache reads fresh (bypass), and what it read is what the next read answers", async () => {
    const name = uniq("nocache");
    const t = await publish(ws.key, name, "one");
    await cached(() => get(ws.key, name));
    await versionBehindTheCache(t.id, "two");
    expect(await get(ws.key, name, "", { "Cache-Control": "no-cache" })).toMatchObject({ state: "bypass", text: "two" });
    expect(await until(() => get(ws.key, name), (r) => r.text === "two")).toMatchObject({ state: "hit", text: "two" });
    const post = await call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, json: {}, headers: { "Cache-Control": "no-store" } }).then(asRead);
    expect(post.state).toBe("bypass");
  });

  it("the bookmark of a write newer than the entry reads fresh; the entry's own bookmark is answered from the cache", async () => {
    const name = uniq("bookmark");
    const t = await publish(ws.key, name, "one");
    // The bookmark of the read that loaded the entry (an entry loaded later has a newer one). Not a
    // hit's: its answer carries the newest bookmark the request knows, which can be newer than the
    // entry's when the request read D1 itself (verifying the key).
    const first = await get(ws.key, name);
    expect(first.state).toBe("miss");
    const seen = first.res.headers.get(BOOKMARK_HEADER)!;
    await cached(() => get(ws.key, name));
    const bookmark = await versionBehindTheCache(t.id, "two");
    expect(await get(ws.key, name, "", { [BOOKMARK_HEADER]: seen })).toMatchObject({ state: "hit", text: "one" });
    const fresh = await get(ws.key, name, "", { [BOOKMARK_HEADER]: `DB=${bookmark}` });
    expect(fresh).toMatchObject({ state: "miss", text: "two" });
    expect(fresh.res.headers.get(BOOKMARK_HEADER)!.slice(3) >= bookmark).toBe(true);
    // Its own publish's bookmark, handed to the read: fresh too.
    const published = await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: completion("three") } } });
    expect((await get(ws.key, name, "", { [BOOKMARK_HEADER]: published.headers.get(BOOKMARK_HEADER)! })).text).toBe("three");
  });
});

describe("authorization comes before the cache", () => {
  it("another workspace gets its own template of the same name, and a 404 for this one's id, whatever is cached", async () => {
    const name = uniq("shared");
    const mine = await publish(ws.key, name, "mine");
    await publish(other.key, name, "theirs");
    await cached(() => get(ws.key, name));
    await cached(() => get(ws.key, mine.id, "?version=1"));
    expect(await get(other.key, name)).toMatchObject({ status: 200, state: "miss", text: "theirs" });
    expect((await get(other.key, mine.id)).status).toBe(404);
    expect((await get(other.key, mine.id, "?version=1")).status).toBe(404);
    const post = await call(`/prompt-templates/${mine.id}`, { method: "POST", key: ws.key, json: { workspace_id: other.workspaceId } });
    expect(post.status).toBe(404);
    expect((await get(ws.key, name)).text).toBe("mine");
  });

  it("a revoked key is refused once AUTH_KEY_CACHE_MS has passed, though its read is cached", async () => {
    const a = await createWorkspace();
    const name = uniq("revoked");
    await publish(a.key, name, "secret");
    await cached(() => get(a.key, name));
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE workspace_id = ?").bind(a.workspaceId).run();
    await sleep(250); // the pool's AUTH_KEY_CACHE_MS is 200 ms
    const refused = await call(`/prompt-templates/${name}`, { key: a.key });
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain("secret");
    expect((await call(`/prompt-templates/${name}`, { method: "POST", key: a.key, json: {} })).status).toBe(401);
  });
});

describe("the generation triggers (migration 0030)", () => {
  it("move a template's generation on with every change to its row, versions, labels and external IDs, and no other template's", async () => {
    const generation = async (id: number) => (await env.DB.prepare("SELECT cache_generation AS g FROM prompt_templates WHERE id = ?").bind(id).first<{ g: number }>())!.g;
    const a = await publish(ws.key, uniq("gen-a"), "a");
    const b = await publish(ws.key, uniq("gen-b"), "b");
    const sql = (query: string, ...values: unknown[]) => () => env.DB.prepare(query).bind(...values).run();
    const changes: [string, () => Promise<unknown>, boolean][] = [
      ["a version", () => versionBehindTheCache(a.id, "a2"), true],
      ["a label", sql("INSERT INTO prompt_labels (workspace_id, prompt_id, prompt_version_id, name) VALUES (?, ?, ?, 'l')", ws.workspaceId, a.id, a.prompt_version_id), true],
      ["a label moved", sql("UPDATE prompt_labels SET updated_at = updated_at + 1 WHERE prompt_id = ?", a.id), true],
      ["a label deleted", sql("DELETE FROM prompt_labels WHERE prompt_id = ?", a.id), true],
      ["an external ID", sql("INSERT INTO external_ids (workspace_id, entity_type, entity_id, source, external_id) VALUES (?, 'prompt_template', ?, 's', ?)", ws.workspaceId, String(a.id), uniq("e")), true],
      ["an external ID removed", sql("DELETE FROM external_ids WHERE entity_type = 'prompt_template' AND entity_id = ?", String(a.id)), true],
      ["the row", sql(`UPDATE prompt_templates SET tags = '["t"]' WHERE id = ?`, a.id), true],
      ["a workflow's external ID with the same id", sql("INSERT INTO external_ids (workspace_id, entity_type, entity_id, source, external_id) VALUES (?, 'workflow', ?, 's', ?)", ws.workspaceId, String(a.id), uniq("w")), false],
    ];
    for (const [what, change, moves] of changes) {
      const before = [await generation(a.id), await generation(b.id)];
      await change();
      if (moves) expect(await generation(a.id), what).toBeGreaterThan(before[0]);
      else expect(await generation(a.id), what).toBe(before[0]);
      expect(await generation(b.id), what).toBe(before[1]);
    }
  });
});
