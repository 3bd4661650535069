// A fuzz pass generated from /openapi.json (scripts/lib/fuzz-cases.mjs, also behind `npm run fuzz`):
// no answer may be a 5xx, and every 4xx has the error shape (or, on the MCP endpoint, JSON-RPC's).
import { describe, expect, it } from "vitest";
import { call, callHandler, createWorkspace, json } from "../helpers/api";
// @ts-expect-error: a plain ES module of the repo's scripts
import { fuzzCases, fuzzProblem } from "../../scripts/lib/fuzz-cases.mjs";

describe("fuzz from /openapi.json", () => {
  it("answers no 5xx, and every 4xx in the error shape", { timeout: 240_000 }, async () => {
    const ws = await createWorkspace();
    const doc = await json(await call("/openapi.json"));
    const cases = fuzzCases(doc, ws.key, { variants: 2 }) as { label: string; path: string; init: RequestInit & { key?: string; json?: unknown } }[];
    expect(cases.length).toBeGreaterThan(500);
    const failures: string[] = [];
    // Sixteen at a time: quick, without swamping a busy machine. Straight to the fetch handler: a
    // thousand requests through the test runtime's entrypoint take minutes (see callHandler).
    for (let i = 0; i < cases.length; i += 16) {
      await Promise.all(
        cases.slice(i, i + 16).map(async (c) => {
          const res = await callHandler(c.path, c.init);
          const problem = fuzzProblem(res.status, await res.text(), c.path);
          if (problem) failures.push(`${c.label} [${c.path.slice(0, 120)}] ${JSON.stringify(c.init.json ?? c.init.body ?? null).slice(0, 160)}: ${problem}`);
        }),
      );
    }
    expect(failures).toEqual([]);
  });
});
