// Text matches of any length: D1 refuses LIKE patterns over 50 bytes, so longer values are matched
// with instr/substr. Each answer is checked for the right matches, not only for the absence of a 500.
import { beforeAll, describe, expect, it } from "vitest";
import { addKey, call, createWorkspace, json, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { indexNow } from "../helpers/logs";
import { likePattern } from "../../src/lib/query";

const LONG = "The quarterly_report for 100% of EMEA accounts, with margins_and notes ".repeat(2); // 142 characters
const chat = (text: string) => ({ type: "chat", messages: [{ role: "user", content: [{ type: "text", text }] }] });
let ws: TestKey;

beforeAll(async () => {
  ws = await createWorkspace();
  for (const [text, tag, note] of [
    [`Summarise: ${LONG}`, `tag-${LONG.slice(0, 60)}`, `note ${LONG}`],
    ["Something short", "short-tag", "short note"],
  ]) {
    const res = await call("/log-request", { method: "POST", key: ws.key, json: logBody({ input: chat(text), tags: [tag], metadata: { note } }) });
    expect(res.status).toBe(201);
  }
  await indexNow();
}, 60_000);

const search = async (filters: unknown[]) => {
  const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { logic: "AND", filters } } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json(res)).total;
};

describe("text matches past D1's LIKE limit", () => {
  it("switches from LIKE to instr at 50 bytes of pattern, counting escapes", () => {
    expect(likePattern("b".repeat(48), "contains")).toBe(`%${"b".repeat(48)}%`);
    expect(likePattern("b".repeat(49), "contains")).toBeNull();
    expect(likePattern("b".repeat(49), "starts_with")).toBe(`${"b".repeat(49)}%`);
    expect(likePattern("_".repeat(24), "contains")).not.toBeNull();
    expect(likePattern("_".repeat(25), "contains")).toBeNull();
    expect(likePattern("é".repeat(24), "contains")).not.toBeNull();
    expect(likePattern("é".repeat(25), "contains")).toBeNull();
  });

  it("search: contains, not_contains, starts_with and ends_with of 48, 49, 60 and 140 characters, case-insensitive, wildcards literal", async () => {
    for (const n of [48, 49, 60, 140]) {
      const piece = LONG.slice(0, n);
      expect(await search([{ field: "input_text", operator: "contains", value: piece }]), `${n}`).toBe(1);
      expect(await search([{ field: "input_text", operator: "contains", value: piece.toUpperCase() }]), `upper ${n}`).toBe(1);
      expect(await search([{ field: "input_text", operator: "not_contains", value: piece }]), `not ${n}`).toBe(1);
      expect(await search([{ field: "input_text", operator: "contains", value: `${piece.slice(0, -1)}#` }]), `miss ${n}`).toBe(0);
      expect(await search([{ field: "input_text", operator: "starts_with", value: `Summarise: ${piece}` }]), `starts ${n}`).toBe(1);
      expect(await search([{ field: "input_text", operator: "ends_with", value: LONG.slice(-n) }]), `ends ${n}`).toBe(1);
    }
    // % and _ match themselves, not any text.
    expect(await search([{ field: "input_text", operator: "contains", value: "100% of EMEA accounts, with margins_and notes The quarterly" }])).toBe(1);
    expect(await search([{ field: "input_text", operator: "contains", value: "100% of EMEA accounts, with margins_and notes The quarterlX" }])).toBe(0);
    expect(await search([{ field: "input_text", operator: "contains", value: "100_ of EMEA accounts, with margins%and notes The quarterly" }])).toBe(0);
  });

  it("search: tags starts_with and metadata key_contains with long values", async () => {
    expect(await search([{ field: "tags", operator: "starts_with", value: `tag-${LONG.slice(0, 55)}` }])).toBe(1);
    expect(await search([{ field: "tags", operator: "starts_with", value: `tag-${LONG.slice(1, 56)}` }])).toBe(0);
    expect(await search([{ field: "metadata", operator: "key_contains", nested_key: "note", value: LONG.slice(3, 63) }])).toBe(1);
    expect(await search([{ field: "metadata", operator: "key_contains", nested_key: "note", value: `${LONG.slice(3, 62)}!` }])).toBe(0);
  });

  it("suggestions and the dataset preview take the same long filters", async () => {
    const filter = JSON.stringify({ logic: "AND", filters: [{ field: "input_text", operator: "contains", value: LONG.slice(0, 60) }] });
    const res = await call(`/api/public/v2/requests/suggestions?${new URLSearchParams({ field: "tags", filter_group: filter })}`, { key: await addKey(ws) });
    expect(res.status).toBe(200);
    expect((await json(res)).values).toEqual([`tag-${LONG.slice(0, 60)}`]);
    const group = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: `g-${crypto.randomUUID()}` } }));
    const preview = await call("/api/public/v2/dataset-versions/from-filter-params/preview", {
      method: "POST",
      key: ws.key,
      json: { dataset_group_id: group.dataset_group.id, filter_group: JSON.parse(filter) },
    });
    expect(preview.status).toBe(200);
    expect((await json(preview)).total_matching).toBe(1);
  });

  it("lists: names of 49 to 255 characters in prompt templates, datasets, evaluations and folder entities", async () => {
    const name = `report_${"b".repeat(60)}_100%`;
    await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("x") } } });
    await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: `reportX${"b".repeat(60)}X100X` }, prompt_version: { prompt_template: chat("x") } } });
    for (const q of ["b".repeat(49), `report_${"b".repeat(60)}_100%`, "B".repeat(60)]) {
      const res = await call(`/prompt-templates?name=${encodeURIComponent(q)}`, { key: ws.key });
      expect(res.status, q).toBe(200);
      const names = (await json(res)).items.map((t: any) => t.prompt_name);
      expect(names, q).toContain(name);
    }
    expect((await json(await call(`/prompt-templates?name=${encodeURIComponent(`report_${"b".repeat(60)}_100%`)}`, { key: ws.key }))).items).toHaveLength(1);
    for (const path of ["/api/public/v2/datasets?name=", "/api/public/v2/evaluations?name=", "/api/public/v2/folders/entities?flatten=true&search_query="]) {
      const res = await call(`${path}${encodeURIComponent("b".repeat(60))}`, { key: ws.key });
      expect(res.status, path).toBe(200);
    }
    const entities = await json(await call(`/api/public/v2/folders/entities?flatten=true&search_query=${encodeURIComponent("b".repeat(60))}`, { key: ws.key }));
    expect(entities.entities.map((e: any) => e.name)).toContain(name);
  });
});
