// POST /api/public/v2/tool-registry/{identifier}/test-execute: runs a tool version's code (or an
// unsaved override) with given inputs in the JavaScript sandbox. A stored version sees the
// environment variables its execution declares (`env_vars`), the tool's over the workspace's; code
// sent in the request sees none, so a key cannot read the workspace's secrets by sending
// `return process.env`; only an admin key stores a version that declares variables (tool-registry.ts),
// and provider credentials are never handed on. A failure of the user's code is a result, not an error.
import type { Db } from "../../db/client";
import { ApiError } from "../../lib/errors";
import { runJavaScript, type JsRunResult } from "../../sandbox/run-javascript";
import { envForRun, isProviderCredential } from "../workspace";
import { getTool } from "./tool-registry";

export interface ToolRunDeps {
  db: Db;
  loader: WorkerLoader | undefined;
  envKey: string | undefined;
  timeoutMs: number;
  cpuMs: number;
}

export interface TestExecuteInput {
  inputs?: Record<string, unknown>;
  execution?: { type: "code"; language: "python" | "javascript"; code: string } | null;
  tool_definition?: Record<string, unknown> | null;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export async function testExecuteTool(
  deps: ToolRunDeps,
  workspaceId: number,
  identifier: string,
  sel: { version?: number; label?: string },
  input: TestExecuteInput,
): Promise<JsRunResult> {
  const tool = await getTool(deps.db, workspaceId, identifier, sel);
  const sent = input.execution != null;
  const execution = (input.execution ?? tool.version?.execution ?? null) as (TestExecuteInput["execution"] & { env_vars?: unknown }) | null;
  if (!execution || execution.type !== "code" || typeof execution.code !== "string") {
    throw new ApiError("validation_error", "execution: this tool version has no execution config; send one in the body to test unsaved code");
  }
  const definition = (input.tool_definition ?? tool.version?.tool_definition ?? {}) as { function?: { name?: unknown } };
  const name = definition.function?.name;
  if (typeof name !== "string" || !name) throw new ApiError("validation_error", "tool_definition: function.name is missing");
  if (execution.language !== "javascript") {
    throw new ApiError("validation_error", `execution.language: ${execution.language} tools cannot run here; only javascript runs in this service's sandbox`);
  }
  if (!IDENTIFIER.test(name)) throw new ApiError("validation_error", `tool_definition: function.name "${name}" is not a JavaScript function name`);
  if (!deps.loader) throw new ApiError("internal_error", "this deployment has no LOADER (Worker Loader) binding, so it cannot run tools");
  const declared = Array.isArray(execution.env_vars) ? execution.env_vars.filter((k): k is string => typeof k === "string") : [];
  // Provider credentials never reach the sandbox, whatever the version declares.
  const env = sent ? {} : await envForRun(deps.db, deps.envKey, workspaceId, tool.id, declared, isProviderCredential);
  return runJavaScript(deps.loader, { code: execution.code, functionName: name, inputs: input.inputs ?? {}, env, timeoutMs: deps.timeoutMs, cpuMs: deps.cpuMs });
}
