// For the Node tests: a new log is searchable within seconds of its write (its search rows are
// written after the answer, src/logs/indexing.ts), so a test that searches for what it just logged
// asks again until it is there.

/** POST /api/public/v2/requests/search until the answer holds `atLeast` items (or `timeoutMs` has passed); the last answer's items. */
export async function searchUntil(api: { url: string; key: string }, body: unknown, atLeast = 1, timeoutMs = 20_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${api.url}/api/public/v2/requests/search`, {
      method: "POST",
      headers: { "X-API-KEY": api.key, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`search answered ${res.status}: ${await res.text()}`);
    const items = ((await res.json()) as { items: any[] }).items;
    if (items.length >= atLeast || Date.now() > deadline) return items;
    await new Promise((r) => setTimeout(r, 100));
  }
}
