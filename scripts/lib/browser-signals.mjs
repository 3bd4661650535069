// The browser test's Signals checks (scripts/test-browser.mjs runs them): a person defines a signal on
// the Signals page, tests it on logs they pick with the verdicts side by side, enables it and watches
// its true-rate; then reads a judged log's verdict in the request view and finds the log with the
// search builder's signals filter. Logs are written through the API (they are not what is tested); the
// judge is the fake provider on this machine (scripts/lib/fake-provider.mjs: "refund" makes it say true).

/** Runs the Signals checks with the test's own page, API client, provider and helpers. */
export async function signalChecks({ page, base, api, provider, providerKey, check, assert, until, shot }) {
  const name = `Refund promised ${Date.now().toString(36)}`;
  const logged = async (answer) =>
    (
      await api("POST", "/log-request", {
        provider: "openai",
        model: "gpt-4o-mini",
        input: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "Where is my money?" }] }] },
        output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: answer }] }] },
        request_start_time: new Date().toISOString(),
        request_end_time: new Date().toISOString(),
      })
    ).id;
  const signalNamed = async () => (await api("GET", `/api/public/v2/signals?name=${encodeURIComponent(name)}`)).items[0];
  let judgedLog = null;

  await check("Signals: defines a signal, tests it on picked logs with the verdicts side by side, enables it and watches its true-rate", async () => {
    // The judge's provider: this run's fake one, as the workspace's keys.
    for (const v of (await api("GET", "/api/public/v2/env-vars")).workspace_env_vars) {
      if (["OPENAI_API_KEY", "OPENAI_BASE_URL"].includes(v.key)) await api("DELETE", `/api/public/v2/env-vars/${v.id}`);
    }
    await api("POST", "/api/public/v2/env-vars", { key: "OPENAI_BASE_URL", value: provider.baseUrl });
    await api("POST", "/api/public/v2/env-vars", { key: "OPENAI_API_KEY", value: providerKey });
    const refund = await logged("Your refund of $20 is on its way.");
    const other = await logged("Happy to help you reset your password.");

    await page.goto(`${base}/console#/signals`);
    await page.getByRole("button", { name: "+ New signal" }).click();
    await page.getByLabel("Signal name").fill(name);
    await page.getByLabel("Statement").fill("Did the assistant promise a refund?");
    await page.getByLabel("Sample rate").fill("1");
    await page.getByRole("button", { name: "Create signal" }).click();
    await page.getByRole("heading", { name }).waitFor();
    const made = await signalNamed();
    assert(made && made.enabled === false && made.hooks[0].sample_rate === 1, `the signal was not created as asked: ${JSON.stringify(made)}`);

    await page.getByLabel(`Pick log ${refund}`).check();
    await page.getByLabel(`Pick log ${other}`).check();
    await page.getByRole("button", { name: "Test 2 logs" }).click();
    const table = page.getByTestId("signal-test");
    const rowOf = (id) => table.locator("tr", { has: page.getByRole("link", { name: `#${id}`, exact: true }) });
    await rowOf(refund).locator(".verdict-true").waitFor();
    await rowOf(other).locator(".verdict-false").waitFor();
    assert((await rowOf(refund).locator("q.quote").innerText()).includes("refund"), "the quote is not shown beside the verdict");
    await shot("signal-test");
    assert((await signalNamed()).totals.processed === 0, "a test stored a result");

    await page.getByLabel("Enabled").check();
    await until("the signal enabled", async () => (await signalNamed()).enabled);
    judgedLog = await logged("We will refund the full amount today.");
    // Indexed, matched, then judged through the signals queue: room for a loaded machine.
    await until("the new log judged", async () => (await signalNamed()).totals.true >= 1, 120_000);
    await page.reload();
    await page.getByTestId("true-rate-chart").waitFor();
    assert((await page.getByTestId("signal-processed").innerText()).trim() !== "0", "the page does not count the verdict");
    await shot("signals");
  });

  await check("Signals: a judged log's verdict in the request view, and the search builder's signals filter finds it", async () => {
    assert(judgedLog !== null, "no judged log (the check before failed)");
    await page.goto(`${base}/console#/requests/${judgedLog}`);
    const verdicts = page.getByTestId("signal-verdicts");
    await verdicts.getByText(name).waitFor();
    await verdicts.locator(".verdict-true").waitFor();

    await page.goto(`${base}/console#/requests`);
    await page.getByRole("button", { name: "+ Add filter" }).click();
    const row = page.getByTestId("filter-row").last();
    await row.getByLabel("Field").selectOption("signals");
    await row.getByLabel("Key").fill(name);
    await row.getByLabel("Operator").selectOption("is_true");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByTestId("request-results").getByRole("link", { name: `#${judgedLog}`, exact: true }).waitFor();
    const byApi = await api("POST", "/api/public/v2/requests/search", {
      filter_group: { logic: "AND", filters: [{ field: "signals", nested_key: name, operator: "is_true" }] },
      per_page: 100,
    });
    assert(byApi.items.some((i) => i.id === judgedLog), "the API's search does not find the judged log");
    await shot("signals-filter");
  });
}
