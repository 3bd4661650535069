// bench:targets' phase 4: a template fetch through a running A/B release beside the same fetch by a
// label no release overloads, and GET /health, one request at a time, interleaved per sample. Both
// fetches are the SDKs' POST with metadata_filters (a unit per sample, so the release assigns sticky
// variants of both versions) and input variables. Target: the release fetch's p99 within 1.2 × the
// plain label fetch's.
import { performance } from "node:perf_hooks";
import { load, percentile } from "./bench.mjs";
import { cpuMs } from "./bench-server.mjs";

const r2 = (x) => Math.round(x * 100) / 100;

export async function releasePhase(api, samples, req, fail) {
  const chat = (text) => ({ type: "chat", messages: [{ role: "system", content: [{ type: "text", text }] }, { role: "user", content: [{ type: "text", text: "{question}" }] }] });
  const metadata = { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.2 } } };
  const name = `bench-release-${Date.now()}`;
  const first = await req("POST", "/rest/prompt-templates", { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("You answer support questions."), metadata }, release_labels: ["prod", "plain"] });
  await req("POST", "/rest/prompt-templates", { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("You answer support questions, briefly."), metadata } });
  await req("POST", "/api/public/v2/ab-tests", {
    name: "bench split",
    prompt_template_id: first.id,
    release_label: "prod",
    assignment_key: "user_id",
    variants: [
      { key: "base", prompt_version_number: 1, percentage: 50 },
      { key: "challenger", prompt_version_number: 2, percentage: 50 },
    ],
  });
  const post = (label, i) =>
    fetch(`${api.url}/prompt-templates/${name}`, {
      method: "POST",
      headers: { "X-API-KEY": api.key, "Content-Type": "application/json" },
      body: JSON.stringify({ label, metadata_filters: { user_id: `user-${i % 500}` }, input_variables: { question: "Where is my order?" } }),
    });
  const kinds = { health: () => fetch(`${api.url}/health`), release: (i) => post("prod", i), plain_label: (i) => post("plain", i) };
  const wall = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
  const cpu = Object.fromEntries(Object.keys(kinds).map((k) => [k, 0]));
  const variants = {};
  for (let i = 0; i < 30; i++) for (const fn of Object.values(kinds)) await (await fn(i)).text();
  const load0 = load();
  for (let i = 0; i < samples; i++) {
    // Alternate which fetch goes first, so neither always follows /health.
    const order = i % 2 ? ["health", "release", "plain_label"] : ["health", "plain_label", "release"];
    for (const k of order) {
      const c0 = cpuMs(api.pid);
      const t0 = performance.now();
      const res = await kinds[k](i);
      const text = await res.text();
      wall[k].push(performance.now() - t0);
      cpu[k] += cpuMs(api.pid) - c0;
      if (res.status !== 200) fail(`release phase ${k}`, res.status, text);
      if (k === "release") {
        const v = res.headers.get("X-PromptEdge-AB")?.split(";")[1] ?? "none";
        variants[v] = (variants[v] ?? 0) + 1;
      }
    }
  }
  const latency = Object.fromEntries(
    Object.keys(kinds).map((k) => {
      const s = [...wall[k]].sort((a, b) => a - b);
      return [k, { n: s.length, p50_ms: r2(percentile(s, 50)), p95_ms: r2(percentile(s, 95)), p99_ms: r2(percentile(s, 99)), cpu_ms_per_request: r2(cpu[k] / s.length) }];
    }),
  );
  return { latency, variants, load: [load0, load()] };
}
