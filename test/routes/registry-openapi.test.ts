// The API document covers the registry, folder, tool registry and external-ID routes with PromptLayer's success codes.
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";

const expected: [string, string, string][] = [
  ["post", "/rest/prompt-templates", "200"],
  ["patch", "/rest/prompt-templates/{identifier}", "201"],
  ["get", "/prompt-templates", "200"],
  ["get", "/prompt-templates/{identifier}", "200"],
  ["post", "/prompt-templates/{identifier}", "200"],
  ["get", "/prompt-templates/{identifier}/labels", "200"],
  ["post", "/prompts/{prompt_id}/label", "200"],
  ["patch", "/prompt-labels/{prompt_label_id}", "200"],
  ["delete", "/prompt-labels/{prompt_label_id}", "204"],
  ["post", "/api/public/v2/folders", "201"],
  ["patch", "/api/public/v2/folders/{folder_id}", "200"],
  ["get", "/api/public/v2/folders/entities", "200"],
  ["post", "/api/public/v2/tool-registry", "201"],
  ["get", "/api/public/v2/tool-registry", "200"],
  ["get", "/api/public/v2/tool-registry/{identifier}", "200"],
  ["post", "/api/public/v2/tool-registry/{identifier}/versions", "201"],
  ...["/prompt-templates/{prompt_template_id}", "/api/public/v2/folders/{folder_id}", "/api/public/v2/tool-registry/{tool_id}"].flatMap(
    (b): [string, string, string][] => [
      ["post", `${b}/external-ids`, "201"],
      ["get", `${b}/external-ids`, "200"],
      ["delete", `${b}/external-ids/{source}/{external_id}`, "200"],
    ],
  ),
];

describe("API document: registry routes", () => {
  it.each(expected)("%s %s answers %s and documents its errors", async (method, path, status) => {
    const doc = await json(await call("/openapi.json"));
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    const codes = Object.keys(op.responses);
    expect(codes.filter((c) => c < "300")).toEqual([status]);
    expect(codes).toEqual(expect.arrayContaining(["400", "401", "500"]));
    expect(op.security).toEqual([{ ApiKeyAuth: [] }]);
  });

  it("documents the 409 of external-ID attaches and the lookup parameters of list endpoints", async () => {
    const doc = await json(await call("/openapi.json"));
    expect(Object.keys(doc.paths["/api/public/v2/tool-registry/{tool_id}/external-ids"].post.responses)).toContain("409");
    for (const p of ["/prompt-templates", "/api/public/v2/tool-registry", "/api/public/v2/folders/entities"]) {
      const names = doc.paths[p].get.parameters.map((x: any) => x.name);
      expect(names, p).toEqual(expect.arrayContaining(["external_source", "external_id"]));
    }
  });
});
