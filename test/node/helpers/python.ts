// PromptLayer's official Python SDK for the node tests: the vendored copy (the SDK with the
// dependencies Debian does not ship, test/python-sdk/vendor.tar.gz, its licences beside it) is
// unpacked into the git-ignored .python-sdk/ when it is missing or older than its archive, and a
// test's Python script runs against a local API with /usr/bin/python3 and the Debian packages of
// test/python-sdk/debian-packages.txt (.ci/run installs them), against the node project's shared
// `wrangler dev`. The script reports what it saw with emit(value); runPython answers the last value emitted.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FakeCall } from "./fake-providers";
import { sharedApi, sharedFakeProviders, sharedKey, type SharedApi } from "./shared-api";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const SDK_DIR = join(ROOT, ".python-sdk");
const STAMP = join(SDK_DIR, "source.sha256");
const PYTHON = "/usr/bin/python3";
const VENDORED = join(ROOT, "test", "python-sdk");

/** The archive: PROMPTLAYER_PYTHON_SDK_ARCHIVE, else the repository's own. */
function findArchive(): string {
  return process.env.PROMPTLAYER_PYTHON_SDK_ARCHIVE || join(VENDORED, "vendor.tar.gz");
}

/** The Debian packages the SDK needs, each with the module that shows it is installed. */
export function debianPackages(): { pkg: string; module: string }[] {
  return readFileSync(join(VENDORED, "debian-packages.txt"), "utf8")
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((p) => p.length === 2)
    .map(([pkg, module]) => ({ pkg: pkg!, module: module! }));
}

/**
 * Why the Python SDK's tests cannot run on this machine, in one line that says what to install, or
 * null when /usr/bin/python3 has every module the SDK needs.
 */
export function pythonSdkMissing(): string | null {
  const packages = debianPackages();
  if (!existsSync(PYTHON)) return `${PYTHON} is missing: apt-get install -y ${packages.map((p) => p.pkg).join(" ")}`;
  const probe = `import importlib, sys\nfor m in sys.argv[1:]:\n    try: importlib.import_module(m)\n    except Exception: print(m)`;
  let absent: string[];
  try {
    absent = execFileSync(PYTHON, ["-c", probe, ...packages.map((p) => p.module)], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .split("\n")
      .filter(Boolean);
  } catch {
    return `${PYTHON} does not run: apt-get install -y ${packages.map((p) => p.pkg).join(" ")}`;
  }
  if (absent.length === 0) return null;
  const need = packages.filter((p) => absent.includes(p.module)).map((p) => p.pkg);
  return `${PYTHON} lacks ${absent.join(", ")}: apt-get install -y ${need.join(" ")}`;
}

/**
 * The PYTHONPATH of the vendored SDK, unpacked first when .python-sdk/ is missing or came from
 * another archive. Unpacked beside it and renamed into place, so test files that start together
 * never see half an SDK.
 */
export function ensurePythonSdk(): string {
  const vendor = join(SDK_DIR, "vendor");
  const archive = findArchive();
  const digest = createHash("sha256").update(readFileSync(archive)).digest("hex");
  if (existsSync(vendor) && existsSync(STAMP) && readFileSync(STAMP, "utf8").trim() === digest) return vendor;
  const staging = `${SDK_DIR}.unpack-${process.pid}-${Date.now()}`;
  mkdirSync(staging, { recursive: true });
  try {
    execFileSync("tar", ["-xzf", archive, "-C", staging], { stdio: "pipe" });
    writeFileSync(join(staging, "source.sha256"), `${digest}\n`);
    rmSync(SDK_DIR, { recursive: true, force: true });
    renameSync(staging, SDK_DIR);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    // Another test file renamed the same archive's copy into place first.
    if (existsSync(STAMP) && readFileSync(STAMP, "utf8").trim() === digest) return vendor;
    throw err;
  }
  return vendor;
}

/** What every script starts with: the SDK's imports and emit(). */
const PRELUDE = `
import asyncio, json, os, sys
import promptlayer
from promptlayer import PromptLayer, AsyncPromptLayer
def emit(value):
    print("@@emit " + json.dumps(value, default=str), flush=True)
`;

export interface PythonOptions {
  /** The local API (PROMPTLAYER_BASE_URL, PROMPTLAYER_API_KEY). */
  api: { url: string; key: string };
  /** More environment, e.g. a fake provider's OPENAI_BASE_URL / ANTHROPIC_BASE_URL. */
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface PythonResult<T = any> {
  /** The last value the script emitted. */
  value: T;
  /** Every value it emitted, in order. */
  values: unknown[];
  stdout: string;
  stderr: string;
}

/** Runs a Python script (after PRELUDE) with the vendored SDK; rejects when it exits non-zero or emits nothing. */
export function runPython<T = any>(script: string, opts: PythonOptions): Promise<PythonResult<T>> {
  const pythonPath = ensurePythonSdk();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    PYTHONPATH: pythonPath,
    PYTHONUNBUFFERED: "1",
    PROMPTLAYER_BASE_URL: opts.api.url,
    PROMPTLAYER_API_KEY: opts.api.key,
    // Loopback only: no proxy the machine might name.
    NO_PROXY: "127.0.0.1,localhost",
    ...opts.env,
  };
  const timeoutMs = opts.timeoutMs ?? 90_000;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(PYTHON, ["-c", `${PRELUDE}\n${script}`], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`${PYTHON} could not start (.ci/run installs it with the SDK's Debian packages): ${err.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const values = stdout
        .split("\n")
        .filter((l) => l.startsWith("@@emit "))
        .map((l) => JSON.parse(l.slice("@@emit ".length)));
      if (code !== 0 || values.length === 0) {
        const why = signal ? `was killed (${signal}${signal === "SIGKILL" ? `, over ${timeoutMs} ms` : ""})` : code !== 0 ? `exited with ${code}` : "emitted nothing";
        return reject(new Error(`the Python script ${why}\n--- stdout\n${stdout.slice(-4000)}\n--- stderr\n${stderr.slice(-8000)}`));
      }
      resolvePromise({ value: values[values.length - 1] as T, values, stdout, stderr });
    });
  });
}

// ---- the shared local API and its fake providers, for a test file's Python scripts ----------------

export interface PythonHarness {
  api: SharedApi;
  /** The fake providers: the Worker's own LLM calls and the scripts' provider clients reach them. */
  fake: { url: string; env: Record<string, string>; calls: () => Promise<FakeCall[]> };
  /** runPython against this API, with the fake providers' environment. */
  python: <T = any>(script: string, opts?: { env?: Record<string, string>; timeoutMs?: number }) => Promise<PythonResult<T>>;
  /** The key of another workspace of the same server, for isolation tests (one of SHARED_WORKSPACES). */
  keyOf: (workspace: string) => string;
  /** A REST call with the harness's key (or another); the body parsed as JSON when there is one. */
  call: (method: string, path: string, body?: unknown, key?: string) => Promise<{ status: number; body: any }>;
}

/**
 * The node project's shared `wrangler dev` (test/node/global-setup.ts), whose own LLM calls reach
 * the fakes served there, with the key of `workspace`; the SDK unpacked first.
 */
export function sharedPythonHarness(workspace: string): PythonHarness {
  ensurePythonSdk();
  const api = sharedApi(workspace);
  const fake = sharedFakeProviders();
  const call: PythonHarness["call"] = async (method, path, body, key = api.key) => {
    const send = () =>
      fetch(`${api.url}${path}`, {
        method,
        headers: { "X-API-KEY": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    // A kept-alive socket the server closes while idle (a Python run can take longer than its
    // keep-alive) fails the next request on it; a read is sent again, once, on a new socket.
    const res = await send().catch((err: unknown) => {
      if (method !== "GET" || (err as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw err;
      return send();
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return {
    api,
    fake,
    python: (script, o = {}) => runPython(script, { api, env: { ...fake.env, ...o.env }, timeoutMs: o.timeoutMs }),
    keyOf: sharedKey,
    call,
  };
}
