#!/usr/bin/env node
// A probe, not a benchmark with targets: workerd CPU per request (bench server, concurrency 16) of
// /health, log-request bodies with and without side rows, and a one-D1-read request, to see what a
// local D1 round trip costs the Worker process. Two passes. `node scripts/bench-log-probe.mjs`
import { startBenchApi, cpuMs } from "./lib/bench-server.mjs";
import { logBody } from "./lib/bench-requests.mjs";
const api = await startBenchApi();
const H = { "X-API-KEY": api.key, "content-type": "application/json" };
async function run(name, n, mk, url = "/log-request", method = "POST") {
  const c0 = cpuMs(api.pid); const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < n) { const i = next++; const r = await fetch(api.url + url, method === "GET" ? { headers: H } : { method, headers: H, body: mk(i) }); await r.text(); } }));
  console.log(name, ((cpuMs(api.pid) - c0) / n).toFixed(2), "ms CPU/req", (n / (performance.now() - t0) * 1000).toFixed(0), "req/s");
}
const full = (i) => logBody(i);
const bare = (i) => { const b = JSON.parse(logBody(i)); delete b.tags; delete b.metadata; delete b.prompt_input_variables; return JSON.stringify(b); };
const tiny = (i) => JSON.stringify({ provider: "openai", model: "m", input: { type: "chat", messages: [] }, output: { type: "chat", messages: [] }, request_start_time: "2025-01-01T00:00:00Z", request_end_time: "2025-01-01T00:00:01Z" });
for (let k = 0; k < 2; k++) {
  await run("health", 1000, null, "/health", "GET");
  await run("full", 600, full);
  await run("no side rows", 600, bare);
  await run("tiny", 600, tiny);
  await run("GET missing id (1 D1 read)", 600, null, "/api/public/v2/requests/99999999", "GET");
  await run("GET /requests/1 with a key", 600, null, "/api/public/v2/requests/1", "GET");
}
await api.stop();
