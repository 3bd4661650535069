// What the browser test's A/B release checks start from, made through the public API: a template
// with a release label for the console to make a release of, and another whose protected label a
// running release overloads, with logs its variants served (scored) and their rollups counted.

import { until } from "./browser-seed.mjs";

const text = (t) => [{ type: "text", text: t }];

/** Two versions and `prod` on the first. */
async function template(api, name) {
  const version = (t) => api("POST", "/rest/prompt-templates", { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "completion", content: text(t) } } });
  const v1 = await version(`${name} one`);
  await version(`${name} two`);
  const label = await api("POST", `/prompts/${v1.id}/label`, { prompt_version_number: 1, name: "prod" });
  return { id: v1.id, name, labelId: label.id };
}

export async function seedReleases(api, run) {
  const fresh = await template(api, `release-${run}-new`);
  const running = await template(api, `release-${run}-running`);
  await api("PUT", `/api/public/v2/prompt-labels/${running.labelId}/protection`, { protected: true });
  const made = await api("POST", "/api/public/v2/ab-tests", {
    name: `tone ${run}`,
    prompt_template_id: running.id,
    release_label: "prod",
    assignment_key: "user_id",
    variants: [
      { key: "base", prompt_version_number: 1, percentage: 50 },
      { key: "challenger", prompt_version_number: 2, percentage: 50 },
    ],
  });
  const id = made.ab_test.id;
  const start = Date.now() - 60_000;
  for (let u = 0; u < 8; u++) {
    const served = await api("POST", `/prompt-templates/${encodeURIComponent(running.name)}`, { label: "prod", metadata_filters: { user_id: `u${u}` } });
    await api("POST", "/log-request", {
      provider: "openai",
      model: "gpt-4o",
      input: { type: "chat", messages: [{ role: "user", content: text(`hello ${u}`) }] },
      output: { type: "chat", messages: [{ role: "assistant", content: text("hi") }] },
      request_start_time: new Date(start + u * 1000).toISOString(),
      request_end_time: new Date(start + u * 1000 + 400 + 50 * u).toISOString(),
      prompt_id: running.id,
      prompt_version_number: served.version,
      metadata: { user_id: `u${u}` },
      score: served.version === 2 ? 85 : 70,
      price: 0.002,
    });
  }
  // Counted in the variants' rollups a moment after the writes (the index consumer's rollup step).
  await until("the release's rollups", async () => {
    const card = await api("GET", `/api/public/v2/ab-tests/${id}/scorecard`);
    return card.variants.reduce((n, v) => n + v.requests, 0) === 8;
  });
  return { fresh, running: { ...running, releaseId: id, releaseName: `tone ${run}` } };
}
