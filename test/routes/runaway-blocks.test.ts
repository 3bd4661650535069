// A block that ran away before (a backtracking REGEX, repeated `..*` in JSON_PATH) no longer holds
// the isolate that evaluates it: the run ends with a value or a clear error, and the same isolate
// answers other requests meanwhile. Before, the REGEX alone needed about 2^5000 steps.
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";

async function results(key: string, id: number) {
  for (let i = 0; i < 400; i++) {
    const res = await call(`/workflow-version-execution-results?workflow_version_execution_id=${id}&return_all_outputs=true`, { key });
    if (res.status === 200) return json(res);
    expect(res.status).toBe(202);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the run did not finish");
}

describe("runaway blocks", () => {
  it("the isolate running a runaway REGEX and JSON_PATH keeps answering, and the run ends", { timeout: 120_000 }, async () => {
    const ws = await createWorkspace();
    let deep: unknown = 1;
    for (let i = 0; i < 400; i++) deep = { a: deep };
    const name = `runaway-${crypto.randomUUID().slice(0, 8)}`;
    const created = await call("/rest/workflows", {
      method: "POST",
      key: ws.key,
      json: {
        name,
        required_input_variables: { text: "string", doc: "string" },
        nodes: [
          { name: "backtrack", node_type: "REGEX", is_output_node: true, configuration: { source: "text", regex_pattern: "(a+)+$" }, dependencies: ["text"] },
          { name: "extract", node_type: "REGEX_EXTRACTION", is_output_node: true, configuration: { source: "text", regex_pattern: "(a|aa)+b" }, dependencies: ["text"] },
          { name: "everything", node_type: "JSON_PATH", is_output_node: true, configuration: { source: "doc", json_path: "$..*..*..*..*", return_first_match: false }, dependencies: ["doc"] },
        ],
      },
    });
    expect(created.status).toBe(201);
    const started = await json(await call(`/workflows/${name}/run`, { method: "POST", key: ws.key, json: { input_variables: { text: `${"a".repeat(5000)}!`, doc: JSON.stringify(deep) } } }));
    // The same isolate serves these while the run is evaluated.
    for (let i = 0; i < 5; i++) expect((await call("/health")).status).toBe(200);
    const all = await results(ws.key, started.workflow_version_execution_id);
    expect(all.backtrack).toMatchObject({ status: "SUCCESS", value: false });
    expect(all.extract).toMatchObject({ status: "SUCCESS", value: [] });
    expect(all.everything).toMatchObject({ status: "FAILED", error_message: "the path matches more than 10000 values; make it more specific" });
  });
});
