// Runs a tool's JavaScript in a Worker Loader isolate of its own: no network (globalOutbound null),
// a CPU limit, a wall-clock limit, and its console captured. The user's code never runs in this
// Worker's isolate, so it cannot reach bindings, other workspaces' data or the API key cache.

export interface JsRun {
  code: string;
  functionName: string;
  inputs: Record<string, unknown>;
  env: Record<string, string>;
  timeoutMs: number;
  cpuMs: number;
}

export interface JsRunResult {
  status: "success" | "error";
  result?: unknown;
  stdout: string;
  stderr: string;
  duration_ms: number;
  error: { type: string; message: string } | null;
}

const OUTPUT_MAX = 65_536;

/** The module the sandbox runs: the user's code, then a fetch handler that calls the named function. */
export function sandboxModule(code: string, functionName: string): string {
  // The name is checked to be an identifier before it gets here; the runtime allows no eval, so the
  // lookup is written into the module.
  return `
const __out = [], __err = [];
const __fmt = (args) => args.map((a) => (typeof a === "string" ? a : (() => { try { return JSON.stringify(a); } catch { return String(a); } })())).join(" ");
globalThis.console = { ...console, log: (...a) => __out.push(__fmt(a)), info: (...a) => __out.push(__fmt(a)), debug: (...a) => __out.push(__fmt(a)), warn: (...a) => __err.push(__fmt(a)), error: (...a) => __err.push(__fmt(a)) };
globalThis.process = { env: {} };
${code}
;const __fn = typeof ${functionName} === "function" ? ${functionName} : undefined;
;export default {
  async fetch(request) {
    const { inputs, env } = await request.json();
    globalThis.process.env = env;
    const fn = __fn;
    if (typeof fn !== "function") {
      return Response.json({ status: "error", error: { type: "NameError", message: "the code defines no function named ${functionName}" }, stdout: __out.join("\\n"), stderr: __err.join("\\n") });
    }
    try {
      const result = await fn(inputs);
      return Response.json({ status: "success", result: result === undefined ? null : JSON.parse(JSON.stringify(result) ?? "null"), stdout: __out.join("\\n"), stderr: __err.join("\\n") });
    } catch (e) {
      return Response.json({ status: "error", error: { type: (e && e.name) || "Error", message: String((e && e.message) || e) }, stdout: __out.join("\\n"), stderr: __err.join("\\n") });
    }
  },
};`;
}

const clip = (s: unknown) => (typeof s === "string" ? (s.length > OUTPUT_MAX ? `${s.slice(0, OUTPUT_MAX)}…` : s) : "");

export async function runJavaScript(loader: WorkerLoader, run: JsRun): Promise<JsRunResult> {
  const started = Date.now();
  const stub = loader.load({
    compatibilityDate: "2026-04-26",
    mainModule: "tool.js",
    modules: { "tool.js": sandboxModule(run.code, run.functionName) },
    globalOutbound: null,
    limits: { cpuMs: run.cpuMs },
  });
  const body = JSON.stringify({ inputs: run.inputs, env: run.env });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SandboxTimeout()), run.timeoutMs);
  });
  try {
    const res = await Promise.race([stub.getEntrypoint().fetch("http://sandbox/", { method: "POST", body }), timeout]);
    const out = (await Promise.race([res.json(), timeout])) as Partial<JsRunResult>;
    return {
      status: out.status === "success" ? "success" : "error",
      ...(out.status === "success" ? { result: out.result } : {}),
      stdout: clip(out.stdout),
      stderr: clip(out.stderr),
      duration_ms: Date.now() - started,
      error: out.status === "success" ? null : (out.error ?? { type: "Error", message: "the tool failed" }),
    };
  } catch (err) {
    const message =
      err instanceof SandboxTimeout
        ? `the tool ran longer than ${run.timeoutMs} ms`
        : // A syntax error in the code, or the isolate killed for its CPU limit.
          String((err as Error)?.message ?? err);
    return { status: "error", stdout: "", stderr: "", duration_ms: Date.now() - started, error: { type: err instanceof SandboxTimeout ? "TimeoutError" : "ExecutionError", message } };
  } finally {
    clearTimeout(timer);
  }
}

class SandboxTimeout extends Error {}
