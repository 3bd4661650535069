// /openapi.json serves every operation of PromptLayer's OpenAPI document (test/fixtures/promptlayer-operations.json), with
// its success codes, except those on the list below, each owned by work still open.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";

/** Operations not served yet, with what they wait for (none today). Remove a line when it lands. */
const NOT_YET: Record<string, string> = {};

const shape = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}/g, "{}")}`;

describe("/openapi.json against PromptLayer's document", () => {
  it("serves every operation with the document's success codes, but those listed as not yet served", async () => {
    const reference = JSON.parse(env.REFERENCE_OPERATIONS) as { method: string; path: string; success: string[] }[];
    expect(reference.length).toBe(143);
    const doc = await json(await call("/openapi.json"));
    const ours = new Map<string, string[]>();
    for (const [path, item] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) ours.set(shape(method, path), Object.keys(op.responses).filter((c) => /^2/.test(c)));
    }
    const missing: string[] = [];
    const wrongCodes: string[] = [];
    for (const op of reference) {
      const key = shape(op.method, op.path);
      const codes = ours.get(key);
      if (!codes) {
        if (!(key in NOT_YET)) missing.push(key);
        continue;
      }
      // Every success code we answer is one the document lists.
      if (op.success.length && !codes.every((c) => op.success.includes(c))) wrongCodes.push(`${key}: ours ${codes.join(",")}, theirs ${op.success.join(",")}`);
    }
    expect(missing).toEqual([]);
    expect(wrongCodes).toEqual([]);
    // A listed operation that is served now must leave the list.
    const served = Object.keys(NOT_YET).filter((k) => ours.has(k));
    expect(served).toEqual([]);
  });
});

describe("/openapi.json tags", () => {
  it("spells each group one way (lower case, words apart by one space), so the reference's navigation lists it once", async () => {
    const doc = await json(await call("/openapi.json"));
    const tags = new Set<string>();
    for (const item of Object.values<Record<string, { tags?: string[] }>>(doc.paths)) for (const op of Object.values(item)) for (const t of op.tags ?? []) tags.add(t);
    // The spelling a route file must use: "tool registry", never "tool-registry", "Tool Registry" or "tool_registry".
    const group = (t: string) => t.toLowerCase().replace(/[\s_-]+/g, " ").trim();
    expect([...tags].filter((t) => group(t) !== t)).toEqual([]);
    // Nor two groups that differ only by their spaces ("external ids", "externalids").
    const loose = (t: string) => t.replace(/ /g, "");
    expect([...tags].filter((t) => [...tags].some((u) => u !== t && loose(u) === loose(t)))).toEqual([]);
    expect(tags).toContain("external ids");
    expect(tags).toContain("tool registry");
  });
});

describe("/openapi.json: what the SDKs call beyond PromptLayer's document", () => {
  it("lists each such operation with the success code the SDKs expect", async () => {
    const doc = await json(await call("/openapi.json"));
    const codes = (method: string, path: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {}).filter((c) => /^[12]/.test(c));
    for (const [method, path, code] of [
      ["post", "/track-request", "200"],
      // The Python SDK's run_workflow checks for 201.
      ["post", "/ws-token-request-library", "201"],
      ["get", "/connection/websocket", "101"],
      // Both SDKs' tables clients (evaluate()).
      ["delete", "/api/public/v2/tables/{table_id}/sheets/{sheet_id}/rows", "200"],
      ["get", "/api/public/v2/tables/{table_id}/sheets/{sheet_id}/status-counts", "200"],
    ] as const) {
      expect(codes(method, path), `${method} ${path}`).toEqual([code]);
    }
  });
});

describe("/openapi.json: the routes whose handler reads the body as a stream (defineStreamingRoute)", () => {
  const STREAMING: Record<string, string[]> = {
    "POST /v1/traces": ["200"],
    "POST /v1/logs": ["200"],
    "POST /api/public/v2/dataset-versions/from-file": ["201"],
    "POST /api/public/v2/tables/{table_id}/sheets": ["201", "202"],
    "POST /api/public/v2/tables/{table_id}/sheets/{sheet_id}/imports/file": ["202"],
  };

  it("declares each as defineRoute declares a route with a body: the key, its success codes, 400, 401, 413, 415 and 500", async () => {
    const doc = await json(await call("/openapi.json"));
    for (const [key, success] of Object.entries(STREAMING)) {
      const [method, path] = key.split(" ");
      const op = doc.paths[path]?.[method.toLowerCase()];
      expect(op, key).toBeDefined();
      expect(op.security, key).toEqual([{ ApiKeyAuth: [] }]);
      expect(Object.keys(op.requestBody.content), key).toContain("application/json");
      const codes = Object.keys(op.responses);
      for (const code of [...success, "400", "401", "413", "415", "500"]) expect(codes, `${key} ${code}`).toContain(code);
      const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect((op.parameters ?? []).filter((p: { in: string }) => p.in === "path").map((p: { name: string }) => p.name), key).toEqual(pathParams);
    }
  });
});

describe("/openapi.json: the MCP endpoint, which is not an operation of PromptLayer's REST API", () => {
  it("documents POST /mcp as needing no key, answering 200 and 202, pointing at docs/mcp.md, as the document's description does", async () => {
    const doc = await json(await call("/openapi.json"));
    const op = doc.paths["/mcp"]?.post;
    expect(op).toBeDefined();
    expect(op.security).toEqual([]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "202", "400", "403", "413", "415"]));
    expect(op.description).toContain("docs/mcp.md");
    expect(doc.info.description).toContain("docs/mcp.md");
    // Only POST: GET and DELETE are the 405 of a known path.
    expect(Object.keys(doc.paths["/mcp"])).toEqual(["post"]);
  });
});
