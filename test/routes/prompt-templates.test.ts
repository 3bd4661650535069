// The prompt registry: publish, patch, get (id/name, version/label), list, release labels, log linking.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";

let ws: TestKey;
let other: TestKey;
let n = 0;
const uniq = (p: string) => `${p}-${Date.now()}-${++n}`;
const chat = (text: string) => ({ type: "chat", messages: [{ role: "system", content: [{ type: "text", text }] }, { role: "user", content: [{ type: "text", text: "Hi {name}" }] }] });
const model = { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.2 } } };

async function publish(key: string, body: Record<string, unknown>) {
  return call("/rest/prompt-templates", { method: "POST", key, json: body });
}
async function publishOk(key: string, name: string, text = "v", extra: Record<string, unknown> = {}) {
  const res = await publish(key, { prompt_template: { prompt_name: name, ...(extra.tmpl as object) }, prompt_version: { prompt_template: chat(text), metadata: model, commit_message: text }, ...extra, tmpl: undefined });
  expect(res.status).toBe(200);
  return json(res);
}

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

describe("POST /rest/prompt-templates", () => {
  it("creates version 1, then adds version 2 under the same name, moving release labels", async () => {
    const name = uniq("greeter");
    const v1 = await publishOk(ws.key, name, "one", { release_labels: ["prod", "staging"], tmpl: { tags: ["a", "b"] } });
    expect(v1).toMatchObject({ prompt_name: name, version_number: 1, tags: ["a", "b"], release_labels: ["prod", "staging"], commit_message: "one", metadata: model, external_ids: [], folder_id: null });
    expect(v1.prompt_template).toEqual(chat("one"));
    const v2 = await publishOk(ws.key, name, "two", { release_labels: ["prod"] });
    expect(v2).toMatchObject({ id: v1.id, version_number: 2, release_labels: ["prod"], tags: ["a", "b"] });
    const labels = await json(await call(`/prompt-templates/${name}/labels`, { key: ws.key }));
    expect(labels.release_labels.map((l: any) => [l.release_label, l.prompt_version_number])).toEqual([["prod", 2], ["staging", 1]]);
  });

  it("refuses bad bodies with 400 naming the field, and creates nothing", async () => {
    const name = uniq("bad");
    const cases: [unknown, RegExp][] = [
      [{ prompt_template: { prompt_name: "" }, prompt_version: { prompt_template: chat("x") } }, /prompt_template.prompt_name: must be 1 to 512 characters/],
      [{ prompt_template: { prompt_name: "x".repeat(513) }, prompt_version: { prompt_template: chat("x") } }, /prompt_name: must be 1 to 512/],
      [{ prompt_template: { prompt_name: name } }, /prompt_version: is required/],
      [{ prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: "plain" }] } } }, /content: must be an array of content blocks/],
      [{ prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "other" } } }, /prompt_version.prompt_template/],
      [{ prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("x"), commit_message: "c".repeat(73) } }, /commit_message: must be at most 72 characters/],
      [{ prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("x") }, release_labels: [""] }, /release_labels\[0\]: must be 1 to 255/],
      [{ prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("x") }, external_ids: [{ source: "s" }] }, /external_ids\[0\].external_id: is required/],
    ];
    for (const [body, msg] of cases) {
      const res = await publish(ws.key, body as Record<string, unknown>);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect((await json(res)).message).toMatch(msg);
    }
    expect((await call(`/prompt-templates/${name}`, { key: ws.key })).status).toBe(404);
    // Limits' good sides.
    expect((await publish(ws.key, { prompt_template: { prompt_name: "x".repeat(512) }, prompt_version: { prompt_template: chat("x"), commit_message: "c".repeat(72) } })).status).toBe(200);
  });

  it("places a template in a folder of its workspace only; another workspace_id is a 404", async () => {
    const folder = (await json(await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: uniq("f") } }))).folder.id;
    const theirs = (await json(await call("/api/public/v2/folders", { method: "POST", key: other.key, json: { name: uniq("f") } }))).folder.id;
    const ok = await publish(ws.key, { prompt_template: { prompt_name: uniq("p"), folder_id: folder }, prompt_version: { prompt_template: chat("x") } });
    expect((await json(ok)).folder_id).toBe(folder);
    expect((await publish(ws.key, { prompt_template: { prompt_name: uniq("p"), folder_id: theirs }, prompt_version: { prompt_template: chat("x") } })).status).toBe(404);
    expect((await publish(ws.key, { prompt_template: { prompt_name: uniq("p"), workspace_id: other.workspaceId }, prompt_version: { prompt_template: chat("x") } })).status).toBe(404);
    expect((await publish(ws.key, { prompt_template: { prompt_name: uniq("p"), workspace_id: ws.workspaceId }, prompt_version: { prompt_template: chat("x") } })).status).toBe(200);
  });

  it("keeps names per workspace: the same name in another workspace is another template", async () => {
    const name = uniq("shared");
    const mine = await publishOk(ws.key, name);
    const theirs = await publishOk(other.key, name);
    expect(theirs.id).not.toBe(mine.id);
    expect(theirs.version_number).toBe(1);
  });
});

describe("GET|POST /prompt-templates/{identifier}", () => {
  let name: string;
  let id: number;
  beforeAll(async () => {
    name = uniq("get");
    id = (await publishOk(ws.key, name, "one", { release_labels: ["prod"] })).id;
    await publishOk(ws.key, name, "two");
  });

  it("finds by id or name; latest by default; version or label selects", async () => {
    for (const ident of [String(id), encodeURIComponent(name)]) {
      const latest = await json(await call(`/prompt-templates/${ident}`, { key: ws.key }));
      expect(latest).toMatchObject({ success: true, id, prompt_name: name, version: 2, workspace_id: ws.workspaceId, commit_message: "two", snippets: [], llm_kwargs: { model: "gpt-4o", temperature: 0.2 } });
    }
    expect((await json(await call(`/prompt-templates/${id}?version=1`, { key: ws.key }))).commit_message).toBe("one");
    expect((await json(await call(`/prompt-templates/${id}?label=prod`, { key: ws.key }))).version).toBe(1);
    expect((await call(`/prompt-templates/${id}?version=9`, { key: ws.key })).status).toBe(404);
    expect((await call(`/prompt-templates/${id}?label=nope`, { key: ws.key })).status).toBe(404);
    expect((await call(`/prompt-templates/${id}?version=1&label=prod`, { key: ws.key })).status).toBe(400);
    expect((await call(`/prompt-templates/${id}?version=0`, { key: ws.key })).status).toBe(400);
  });

  it("POST (the SDK's form) takes no body, or version/label/input_variables", async () => {
    const bare = await call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, headers: { "Content-Type": "application/json" } });
    expect(bare.status).toBe(200);
    expect((await json(bare)).version).toBe(2);
    const filled = await json(await call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, json: { version: 1, input_variables: { name: "Ada" } } }));
    expect(filled.prompt_template.messages[1].content[0].text).toBe("Hi Ada");
    const raw = await json(await call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, json: { label: "prod", input_variables: { name: "Ada" }, skip_input_variable_rendering: true } }));
    expect(raw.prompt_template.messages[1].content[0].text).toBe("Hi {name}");
    expect((await call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, json: { version: -1 } })).status).toBe(400);
    expect((await call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, body: "{oops", headers: { "Content-Type": "application/json" } })).status).toBe(400);
  });

  it("is 404 for another workspace's template, by id and by name", async () => {
    expect((await call(`/prompt-templates/${id}`, { key: other.key })).status).toBe(404);
    expect((await call(`/prompt-templates/${name}`, { key: other.key })).status).toBe(404);
    expect((await call(`/prompt-templates/${id}`, { method: "POST", key: other.key, json: {} })).status).toBe(404);
    expect((await call(`/prompt-templates/${id}/labels`, { key: other.key })).status).toBe(404);
    expect((await call(`/prompt-templates/${id}`)).status).toBe(401);
  });
});

describe("PATCH /rest/prompt-templates/{identifier}", () => {
  it("patches messages by index from the latest version, merges model parameters, moves labels (201)", async () => {
    const name = uniq("patch");
    await publishOk(ws.key, name, "one");
    const res = await call(`/rest/prompt-templates/${name}`, {
      method: "PATCH",
      key: ws.key,
      json: { messages: { "0": { role: "system", content: [{ type: "text", text: "patched" }] } }, model_parameters: { max_tokens: 5 }, commit_message: "p", release_labels: ["staging"] },
    });
    expect(res.status).toBe(201);
    const b = await json(res);
    expect(b).toMatchObject({ version_number: 2, base_version: 1, release_labels: ["staging"], commit_message: "p" });
    expect(b.prompt_template.messages[0].content[0].text).toBe("patched");
    expect(b.prompt_template.messages[1].content[0].text).toBe("Hi {name}");
    expect(b.metadata.model.parameters).toEqual({ temperature: 0.2, max_tokens: 5 });
  });

  it("bases on a version or label, replaces all messages with an array, sets response_format", async () => {
    const name = uniq("patch2");
    await publishOk(ws.key, name, "one", { release_labels: ["prod"] });
    await publishOk(ws.key, name, "two");
    const b = await json(
      await call(`/rest/prompt-templates/${name}`, { method: "PATCH", key: ws.key, json: { label: "prod", messages: [{ role: "user", content: [{ type: "text", text: "only" }] }], response_format: { type: "json_object" } } }),
    );
    expect(b).toMatchObject({ version_number: 3, base_version: 1 });
    expect(b.prompt_template.messages).toHaveLength(1);
    expect(b.metadata.model.parameters.response_format).toEqual({ type: "json_object" });
  });

  it("refuses out-of-range indexes, wrong template types, conflicting fields and invalid results", async () => {
    const name = uniq("patch3");
    await publishOk(ws.key, name, "one");
    const cases: [unknown, RegExp][] = [
      [{ messages: { "2": { role: "user", content: [] } } }, /messages.2: index out of range/],
      [{ messages: { x: {} } }, /messages.x: keys must be message indexes/],
      [{ content: [{ type: "text", text: "x" }] }, /content: only completion templates/],
      [{ response_format: { type: "json_object" }, model_parameters: { response_format: {} } }, /response_format: give it either/],
      [{ version: 1, label: "prod" }, /version: give either version or label/],
      [{ messages: [{ role: "user", content: "plain" }] }, /prompt_template.messages\[0\].content/],
    ];
    for (const [body, msg] of cases) {
      const res = await call(`/rest/prompt-templates/${name}`, { method: "PATCH", key: ws.key, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).message).toMatch(msg);
    }
    expect((await call(`/rest/prompt-templates/${name}`, { method: "PATCH", key: ws.key, json: { version: 7 } })).status).toBe(404);
    expect((await json(await call(`/prompt-templates/${name}`, { key: ws.key }))).version).toBe(1);
    expect((await call(`/rest/prompt-templates/${name}`, { method: "PATCH", key: other.key, json: {} })).status).toBe(404);
  });
});

describe("GET /prompt-templates", () => {
  it("pages, filters by name, tags and label, and never shows another workspace's templates", async () => {
    const w = await createWorkspace();
    const tag = uniq("tag");
    for (let i = 0; i < 5; i++) await publishOk(w.key, `list-${i}`, "x", { tmpl: { tags: i % 2 ? [tag, "odd"] : [tag] }, release_labels: i < 2 ? ["prod"] : [] });
    await publishOk(w.key, "list-0", "second");
    await publishOk(other.key, "list-0", "theirs");
    const page1 = await json(await call("/prompt-templates?per_page=2&sort_by=name&sort_order=asc", { key: w.key }));
    expect(page1).toMatchObject({ page: 1, pages: 3, total: 5, has_next: true, has_prev: false, next_num: 2, prev_num: null });
    expect(page1.items.map((i: any) => [i.prompt_name, i.version])).toEqual([["list-0", 2], ["list-1", 1]]);
    const page3 = await json(await call("/prompt-templates?per_page=2&page=3&sort_by=name&sort_order=asc", { key: w.key }));
    expect(page3).toMatchObject({ has_next: false, has_prev: true, items: [{ prompt_name: "list-4" }] });
    const labelled = await json(await call("/prompt-templates?label=prod&sort_by=name&sort_order=asc", { key: w.key }));
    expect(labelled.items.map((i: any) => [i.prompt_name, i.version])).toEqual([["list-0", 1], ["list-1", 1]]);
    const tagged = await json(await call(`/prompt-templates?tags=${tag}&tags=odd`, { key: w.key }));
    expect(tagged.items.map((i: any) => i.prompt_name).sort()).toEqual(["list-1", "list-3"]);
    expect((await json(await call("/prompt-templates?name=LIST-4", { key: w.key }))).total).toBe(1);
    expect((await json(await call("/prompt-templates?name=%25", { key: w.key }))).total).toBe(0);
    for (const q of ["per_page=0", "per_page=101", "page=0", "sort_by=size", "sort_order=up"]) {
      expect((await call(`/prompt-templates?${q}`, { key: w.key })).status, q).toBe(400);
    }
    expect((await call("/prompt-templates?per_page=100", { key: w.key })).status).toBe(200);
  });

  it("matches % and _ in name literally", async () => {
    const w = await createWorkspace();
    await publishOk(w.key, "100%_sure");
    await publishOk(w.key, "100x-sure");
    const names = async (q: string) => (await json(await call(`/prompt-templates?name=${encodeURIComponent(q)}`, { key: w.key }))).items.map((i: any) => i.prompt_name);
    expect(await names("%_")).toEqual(["100%_sure"]);
    expect(await names("100")).toHaveLength(2);
  });
});

describe("release labels", () => {
  let promptId: number;
  beforeAll(async () => {
    const name = uniq("labels");
    promptId = (await publishOk(ws.key, name, "one")).id;
    await publishOk(ws.key, name, "two");
  });

  it("POST /prompts/{id}/label → 200 with all fields; duplicate name 409; unknown version 404", async () => {
    const res = await call(`/prompts/${promptId}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 1, name: "beta" } });
    expect(res.status).toBe(200);
    const l = await json(res);
    expect(l).toEqual({ id: expect.any(Number), name: "beta", protected: false, prompt_id: promptId, prompt_version_id: expect.any(Number), prompt_version_number: 1, created_at: expect.any(String), updated_at: expect.any(String) });
    const dup = await call(`/prompts/${promptId}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 2, name: "beta" } });
    expect(dup.status).toBe(409);
    expect((await call(`/prompts/${promptId}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 3, name: "x" } })).status).toBe(404);
    expect((await call(`/prompts/99999999/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 1, name: "x" } })).status).toBe(404);
    expect((await call(`/prompts/${promptId}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 0, name: "x" } })).status).toBe(400);
    expect((await call(`/prompts/${promptId}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 1, name: "" } })).status).toBe(400);
    expect((await call(`/prompts/${promptId}/label`, { method: "POST", key: other.key, json: { prompt_version_number: 1, name: "y" } })).status).toBe(404);
  });

  it("PATCH /prompt-labels/{id} moves the label; DELETE → 204; another workspace → 404", async () => {
    const l = await json(await call(`/prompts/${promptId}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 1, name: "mover" } }));
    expect((await call(`/prompt-labels/${l.id}`, { method: "PATCH", key: other.key, json: { prompt_version_number: 2 } })).status).toBe(404);
    expect((await call(`/prompt-labels/${l.id}`, { method: "DELETE", key: other.key })).status).toBe(404);
    const moved = await call(`/prompt-labels/${l.id}`, { method: "PATCH", key: ws.key, json: { prompt_version_number: 2 } });
    expect(moved.status).toBe(200);
    expect(await json(moved)).toMatchObject({ id: l.id, name: "mover", prompt_version_number: 2 });
    expect((await json(await call(`/prompt-templates/${promptId}?label=mover`, { key: ws.key }))).version).toBe(2);
    expect((await call(`/prompt-labels/${l.id}`, { method: "PATCH", key: ws.key, json: { prompt_version_number: 5 } })).status).toBe(404);
    const del = await call(`/prompt-labels/${l.id}`, { method: "DELETE", key: ws.key });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe("");
    expect((await call(`/prompt-labels/${l.id}`, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect((await call(`/prompt-templates/${promptId}?label=mover`, { key: ws.key })).status).toBe(404);
    // The name is free again.
    expect((await call(`/prompts/${promptId}/label`, { method: "POST", key: ws.key, json: { prompt_version_number: 1, name: "mover" } })).status).toBe(200);
  });
});

describe("POST /log-request links published versions", () => {
  it("returns the prompt_version a published template's name or id and version number name", async () => {
    const name = uniq("linked");
    const p = await publishOk(ws.key, name, "one");
    for (const ref of [{ prompt_id: p.id }, { prompt_name: name }]) {
      const res = await call("/log-request", { method: "POST", key: ws.key, json: logBody({ ...ref, prompt_version_number: 1 }) });
      expect(res.status).toBe(201);
      expect((await json(res)).prompt_version).toMatchObject({ id: p.prompt_version_id, prompt_id: p.id, prompt_name: name, version: 1 });
    }
    const theirs = await call("/log-request", { method: "POST", key: other.key, json: logBody({ prompt_id: p.id, prompt_version_number: 1 }) });
    expect((await json(theirs)).prompt_version).toBeNull();
  });
});

describe("GET /prompt-templates with a full page", () => {
  it("lists 100 templates on one page, also filtered by label (ids bound as one JSON list, within D1's 100 parameters)", async () => {
    const w = await createWorkspace();
    for (let i = 0; i < 101; i++) await publishOk(w.key, `t${String(i).padStart(3, "0")}`, "x", { release_labels: ["prod"] });
    const page = await call("/prompt-templates?per_page=100", { key: w.key });
    expect(page.status).toBe(200);
    const body = await json(page);
    expect(body.items).toHaveLength(100);
    expect(body.total).toBe(101);
    const labelled = await json(await call("/prompt-templates?per_page=100&label=prod", { key: w.key }));
    expect(labelled.items).toHaveLength(100);
  });
});

describe("GET /prompt-templates?tags=", () => {
  it("takes any number of tags (every one must be on the template)", async () => {
    const w = await createWorkspace();
    await publishOk(w.key, "tagged", "x", { tmpl: { tags: ["a", "b"] } });
    const many = ["a", ...Array.from({ length: 150 }, (_, i) => `t${i}`)].join(",");
    const res = await call(`/prompt-templates?tags=${many}`, { key: w.key });
    expect(res.status).toBe(200);
    expect((await json(res)).total).toBe(0);
    expect((await json(await call("/prompt-templates?tags=a,b", { key: w.key }))).total).toBe(1);
    expect((await json(await call("/prompt-templates?tags=a,c", { key: w.key }))).total).toBe(0);
  });
});
