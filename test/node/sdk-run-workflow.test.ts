// The official SDK's runWorkflow against a real `wrangler dev`: it starts the run, asks for a
// realtime token, listens on the Centrifugo-protocol WebSocket and returns the run's outputs.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { sharedApi } from "./helpers/shared-api";
import { WebSocket as NodeWebSocket } from "ws";

// Node 20 has no global WebSocket (Node 22 has); the SDK's realtime client needs one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= NodeWebSocket;
const require = createRequire(import.meta.url);
const { PromptLayer } = require("promptlayer") as typeof import("promptlayer");

const api = sharedApi("sdk-run-workflow");

const post = (path: string, body: unknown, key = api.key) =>
  fetch(`${api.url}${path}`, { method: "POST", headers: { "X-API-KEY": key, "Content-Type": "application/json" }, body: JSON.stringify(body) });

describe("runWorkflow", () => {
  it("returns the outputs of a run through the realtime channel, main output or all of them", async () => {
    const name = `wf-${Date.now()}`;
    const made = await post("/rest/workflows", {
      name,
      nodes: [
        { name: "greeting", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "Hello, realtime!" } }, dependencies: [] },
      ],
    });
    expect(made.status).toBe(201);
    const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url });
    const main = await pl.runWorkflow({ workflowName: name, inputVariables: {}, timeout: 60_000 } as never);
    expect(main).toBe("Hello, realtime!");
    const all = (await pl.runWorkflow({ workflowName: name, inputVariables: {}, returnAllOutputs: true, timeout: 60_000 } as never)) as Record<string, any>;
    expect(all.greeting).toMatchObject({ status: "SUCCESS", value: "Hello, realtime!", is_output_node: true });
  });

  it("gives tokens only for runs of the key's workspace, and refuses bad capabilities", async () => {
    const res = await post("/ws-token-request-library?capability=workflow_updates:999999999", {});
    expect(res.status).toBe(404);
    expect((await post("/ws-token-request-library?capability=other:1", {})).status).toBe(400);
    expect((await post("/ws-token-request-library?capability=workflow_updates:1", {}, "pe_wrong")).status).toBe(401);
  });

  it("closes a connection whose token is forged", async () => {
    const url = `${api.url.replace(/^http/, "ws")}/connection/websocket`;
    const closed = await new Promise<{ code: number; messages: string[] }>((resolve, reject) => {
      const ws = new NodeWebSocket(url);
      const messages: string[] = [];
      ws.on("open", () => ws.send(JSON.stringify({ id: 1, connect: { token: "eyJ4Ijo.forged" } })));
      ws.on("message", (m) => messages.push(String(m)));
      ws.on("close", (code) => resolve({ code, messages }));
      ws.on("error", reject);
    });
    expect(closed.code).toBe(3500);
    expect(JSON.parse(closed.messages[0])).toEqual({ id: 1, error: { code: 101, message: "unauthorized" } });
  });
});
