#!/usr/bin/env node
// npm run fuzz: a longer fuzz pass than the test suite's, against a local API: cases generated from
// /openapi.json (scripts/lib/fuzz-cases.mjs) with new seeds until N requests (default 10,000) are
// sent. Prints the answers by status class and every rule broken (a 5xx, a 4xx not in the error shape).
//
//   npm run fuzz [-- --requests 10000 --concurrency 8 --seed 0] [-- --url http://127.0.0.1:8787 --key pe_…] [-- --log broken.jsonl]
//
// --seed: the first seed (each seed is one pass over every operation, ~1,500 requests); runs from
// different seeds send different cases.
// --log writes each broken rule's request (method, path, headers, body's first 2,000 characters, seed,
// time sent) and answer (status, headers, body) as one JSON line, to replay it and find it in the server's log
// (with its own local API, that API's output goes to FILE.server.log).
// Without --url it starts its own local API (fresh state, `wrangler dev`). Exit code 1 when a rule broke.
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fuzzCases, fuzzProblem } from "./lib/fuzz-cases.mjs";
import { startLocalApi } from "./lib/local-api.mjs";
import { optionsOrExit } from "./lib/bench.mjs";

function parseOptions(argv) {
  const opts = { requests: 10_000, concurrency: 8, seed: 0, url: null, key: null, log: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--requests" || a === "--concurrency" || a === "--seed") opts[a.slice(2)] = Number(argv[++i]);
    else if (a === "--url" || a === "--key" || a === "--log") opts[a.slice(2)] = argv[++i];
    else throw new Error(`unknown argument ${JSON.stringify(a)}; usage: npm run fuzz [-- --requests N --concurrency N --seed N --url URL --key KEY --log FILE]`);
  }
  for (const k of ["requests", "concurrency"]) if (!Number.isInteger(opts[k]) || opts[k] < 1) throw new Error(`--${k} must be a whole number >= 1`);
  if (!Number.isInteger(opts.seed) || opts.seed < 0) throw new Error("--seed must be a whole number >= 0");
  if (Boolean(opts.url) !== Boolean(opts.key)) throw new Error("--url and --key go together");
  return opts;
}

async function main() {
  const opts = optionsOrExit(parseOptions);
  const api = opts.url ? { url: opts.url.replace(/\/$/, ""), key: opts.key, stop: async () => {} } : await startLocalApi({ workspace: "fuzz" });
  const byClass = {};
  const problems = [];
  const details = [];
  let sent = 0;
  let seed = opts.seed;
  const t0 = performance.now();
  try {
    const doc = await (await fetch(`${api.url}/openapi.json`)).json();
    for (seed = opts.seed; sent < opts.requests; seed++) {
      const cases = fuzzCases(doc, api.key, { variants: 3, seed });
      // Making a seed's cases holds this process's event loop for seconds on a loaded machine: the
      // server closes the idle keep-alive connections meanwhile (after 5 s), before the client's own
      // timers could retire them, and the first requests written to them got no answer ("fetch
      // failed", or none within 60 s: GET /, /health, /docs, /openapi.json at each seed's start, the
      // Worker having answered every request it received). A pause lets the client retire them first.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      for (let i = 0; i < cases.length && sent < opts.requests; i += opts.concurrency) {
        const batch = cases.slice(i, Math.min(i + opts.concurrency, i + opts.requests - sent));
        await Promise.all(
          batch.map(async (c) => {
            const headers = new Headers(c.init.headers);
            if (c.init.key) headers.set("X-API-KEY", c.init.key);
            let body = c.init.body;
            if (c.init.json !== undefined) {
              headers.set("Content-Type", "application/json");
              body = JSON.stringify(c.init.json);
            }
            let status = 0;
            let text = "";
            let answerHeaders = {};
            const at = new Date().toISOString();
            try {
              const res = await fetch(`${api.url}${c.path}`, { method: c.init.method, headers, body, signal: AbortSignal.timeout(60_000) });
              status = res.status;
              answerHeaders = Object.fromEntries(res.headers);
              text = await res.text();
            } catch (err) {
              text = `no answer: ${err.message}`;
            }
            sent++;
            const cls = status ? `${String(status)[0]}xx` : "none";
            byClass[cls] = (byClass[cls] ?? 0) + 1;
            const problem = status ? fuzzProblem(status, text, c.path) : text;
            if (problem) {
              problems.push(`${c.label} [${c.path.slice(0, 100)}]: ${problem}`);
              // The whole exchange, so a broken rule can be replayed and matched with the server's log.
              details.push({ at, seed, status, problem, method: c.init.method, path: c.path, headers: Object.fromEntries(headers), bodyBytes: body === undefined ? 0 : Buffer.byteLength(body), body: body?.slice(0, 2_000), answerHeaders, answer: text.slice(0, 2_000) });
            }
          }),
        );
      }
    }
  } finally {
    // The local API's own output beside the broken rules, to tell the Worker's answers from the local runtime's.
    if (opts.log && api.logs) writeFileSync(`${opts.log}.server.log`, api.logs());
    await api.stop();
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(`requests: ${sent} in ${seconds.toFixed(0)} s (${(sent / seconds).toFixed(0)}/s), seeds ${opts.seed} to ${seed - 1}`);
  console.log(`answers: ${Object.entries(byClass).sort().map(([k, v]) => `${k} ${v}`).join(", ")}`);
  console.log(`rules broken: ${problems.length}`);
  for (const p of problems.slice(0, 50)) console.log(`  ${p}`);
  if (opts.log) {
    writeFileSync(opts.log, details.map((d) => JSON.stringify(d)).join("\n") + (details.length ? "\n" : ""));
    console.log(`broken rules' requests and answers: ${opts.log}`);
  }
  process.exit(problems.length ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
