// Webhooks: registration (secret once, limits, private URLs, isolation), delivery (signatures, the
// Python-style body, retries with every attempt logged) and the events each change emits.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { seedLogs } from "../helpers/logs";
import { eventsAt, hookKey, hookUrl, inbox, register, verify, waitForInbox } from "../helpers/webhooks";

const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;

describe("smoke", () => {
  it("a dataset fill reaches the receiver", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { secret } = await register(ws, { url: hookUrl(key) });
    await seedLogs(ws.key);
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("g") } }));
    const res = await call("/api/public/v2/dataset-versions/from-filter-params", { method: "POST", key: ws.key, json: { dataset_group_id: g.dataset_group.id } });
    expect(res.status).toBe(201);
    const [got] = await waitForInbox(key, 1);
    console.log(got);
    expect(await verify(got, secret)).toBe(true);
  });
});
