// Snippets through the registry (fetch fills them, publishing a cycle is refused), snippet usage, and
// PUT /prompt-templates/by-external-id/{source}/{external_id}.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

let ws: TestKey;
let other: TestKey;
const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const completion = (text: string) => ({ type: "completion", content: [{ type: "text", text }] });
const publish = (key: string, name: string, text: string, extra: Record<string, unknown> = {}) =>
  call("/rest/prompt-templates", { method: "POST", key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: completion(text) }, ...extra } });
const get = async (key: string, name: string, query = "") => call(`/prompt-templates/${encodeURIComponent(name)}${query}`, { key });

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

describe("snippets in the registry", () => {
  it("fills @@@name@@@ with the snippet's latest version when a template is fetched, before input variables", async () => {
    const snip = uniq("greeting");
    const main = uniq("main");
    expect((await publish(ws.key, snip, "Hello {name}")).status).toBe(200);
    expect((await publish(ws.key, main, `@@@${snip}@@@! Bye.`)).status).toBe(200);
    const body = await json(await get(ws.key, main));
    expect(body.prompt_template.content[0].text).toBe("Hello {name}! Bye.");
    expect(body.snippets).toEqual([{ id: expect.any(Number), prompt_name: snip, version: 1 }]);
    await publish(ws.key, snip, "Hi {name}");
    const rendered = await json(await call(`/prompt-templates/${main}`, { method: "POST", key: ws.key, json: { input_variables: { name: "Ada" } } }));
    expect(rendered.prompt_template.content[0].text).toBe("Hi Ada! Bye.");
    // Another workspace's template of that name is not a snippet here.
    const theirs = uniq("main");
    await publish(other.key, theirs, `@@@${snip}@@@`);
    expect((await json(await get(other.key, theirs))).prompt_template.content[0].text).toBe(`@@@${snip}@@@`);
  });

  it("refuses a version whose snippets would cycle (400) and stores nothing", async () => {
    const a = uniq("a");
    const b = uniq("b");
    await publish(ws.key, a, "plain");
    await publish(ws.key, b, `@@@${a}@@@`);
    const res = await publish(ws.key, a, `@@@${b}@@@`);
    expect(res.status).toBe(400);
    expect((await json(res)).message).toBe(`prompt_template: snippets form a cycle: ${a} → ${b} → ${a}`);
    expect((await json(await get(ws.key, a))).version).toBe(1);
    const self = await call(`/rest/prompt-templates/${a}`, { method: "PATCH", key: ws.key, json: { content: [{ type: "text", text: `@@@${a}@@@` }] } });
    expect(self.status).toBe(400);
  });

  it("lists the templates, versions and labels that include a snippet", async () => {
    const snip = uniq("snip");
    const user = uniq("user");
    await publish(ws.key, snip, "S");
    await publish(ws.key, user, `x @@@${snip}@@@`, { release_labels: ["prod"] });
    await publish(ws.key, user, "no snippet");
    await publish(ws.key, user, `y @@@${snip}@@@`, { release_labels: ["staging"] });
    const res = await call(`/prompt-templates/${snip}/snippet-usage`, { key: ws.key });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({
      success: true,
      snippet_name: snip,
      total_prompts_using_snippet: 1,
      total_labels_using_snippet: 2,
      snippet_usage: [{ prompt_registry_id: expect.any(Number), prompt_name: user, version_numbers: [1, 3] }],
    });
    expect(body.label_usage.map((l: any) => l.label_name)).toEqual(["prod", "staging"]);
    expect((await json(await call(`/prompt-templates/${snip}/snippet-usage?prompt_version_number=1`, { key: ws.key }))).total_prompts_using_snippet).toBe(1);
    await publish(ws.key, snip, "S2");
    expect((await json(await call(`/prompt-templates/${snip}/snippet-usage?prompt_version_number=1`, { key: ws.key }))).snippet_usage).toEqual([]);
    const noVersion = await call(`/prompt-templates/${snip}/snippet-usage?prompt_version_number=9`, { key: ws.key });
    expect([noVersion.status, (await json(noVersion)).message]).toEqual([404, "version: prompt template has no version 9"]);
    const foreign = await call(`/prompt-templates/${snip}/snippet-usage?prompt_version_number=1`, { key: other.key });
    expect([foreign.status, (await json(foreign)).message]).toEqual([404, "prompt template not found"]);
    expect((await call(`/prompt-templates/${snip}/snippet-usage`, { key: other.key })).status).toBe(404);
    expect((await call(`/prompt-templates/${snip}/snippet-usage?prompt_version_number=0`, { key: ws.key })).status).toBe(400);
  });
});

describe("PUT /prompt-templates/by-external-id/{source}/{external_id}", () => {
  const put = (key: string, source: string, id: string, name: string, text: string, extra: Record<string, unknown> = {}) =>
    call(`/prompt-templates/by-external-id/${encodeURIComponent(source)}/${encodeURIComponent(id)}`, {
      method: "PUT",
      key,
      json: { prompt_template: { prompt_name: name, ...(extra.tmpl as object) }, prompt_version: { prompt_template: completion(text), metadata: extra.metadata ?? null }, release_labels: extra.labels },
    });

  it("creates once (201), then the same call changes nothing (200, no new version); new content adds a version", async () => {
    const name = uniq("ext");
    const ext = uniq("git");
    const first = await put(ws.key, "repo", ext, name, "v1");
    expect(first.status).toBe(201);
    const created = await json(first);
    expect(created).toMatchObject({ prompt_name: name, version_number: 1, external_ids: [{ source: "repo", external_id: ext }] });
    const again = await put(ws.key, "repo", ext, name, "v1", { labels: ["prod"] });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ id: created.id, version_number: 1, release_labels: ["prod"] });
    const changed = await json(await put(ws.key, "repo", ext, name, "v2"));
    expect(changed).toMatchObject({ id: created.id, version_number: 2 });
    expect((await json(await get(ws.key, name))).version).toBe(2);
  });

  it("renames the mapped template to the body's name; a name taken by another template is a 409", async () => {
    const ext = uniq("git");
    const created = await json(await put(ws.key, "repo", ext, uniq("old"), "same"));
    const renamed = uniq("new");
    const res = await put(ws.key, "repo", ext, renamed, "same");
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id: created.id, prompt_name: renamed, version_number: 1 });
    const taken = uniq("taken");
    await publish(ws.key, taken, "x");
    const conflict = await put(ws.key, "repo", ext, taken, "same");
    expect([conflict.status, (await json(conflict)).message]).toEqual([409, `prompt_name: another prompt template is named "${taken}"`]);
    expect((await json(await get(ws.key, renamed))).id).toBe(created.id);
  });

  it("maps an existing template of that name (200); external IDs of another workspace neither show nor conflict", async () => {
    const name = uniq("named");
    const pre = await json(await publish(ws.key, name, "a"));
    const ext = uniq("git");
    const res = await put(ws.key, "repo", ext, name, "a");
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id: pre.id, version_number: 2, external_ids: [{ source: "repo", external_id: ext }] });
    const theirs = await put(other.key, "repo", ext, uniq("theirs"), "a");
    expect(theirs.status).toBe(201);
    expect((await json(theirs)).id).not.toBe(pre.id);
  });

  it("validates path and body: source 1..128, external_id 1..512", async () => {
    expect((await put(ws.key, "s".repeat(129), "x", uniq("n"), "a")).status).toBe(400);
    expect((await put(ws.key, "s".repeat(128), "x".repeat(512), uniq("n"), "a")).status).toBe(201);
    expect((await put(ws.key, "s", "x".repeat(513), uniq("n"), "a")).status).toBe(400);
    const bad = await call(`/prompt-templates/by-external-id/s/x`, { method: "PUT", key: ws.key, json: { prompt_template: { prompt_name: "" } } });
    expect(bad.status).toBe(400);
  });
});
