// The workspace's log retention setting: null by default, 1..3650 days or null, nothing changed by a
// refused value, and one workspace's setting is not another's.
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

const PATH = "/api/public/v2/workspace/log-retention";
const get = async (ws: TestKey) => {
  const res = await call(PATH, { key: ws.key });
  expect(res.status).toBe(200);
  return json(res);
};
const put = (ws: TestKey, body: unknown) => call(PATH, { method: "PUT", key: ws.key, json: body });

describe("/api/public/v2/workspace/log-retention", () => {
  it("keeps every log by default, and takes 1 to 3650 days or null", async () => {
    const ws = await createWorkspace();
    expect(await get(ws)).toEqual({ success: true, days: null });
    for (const days of [1, 3650, 30, null]) {
      const res = await put(ws, { days });
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ success: true, days });
      expect(await get(ws)).toEqual({ success: true, days });
    }
  });

  it("refuses a value outside the bounds with a 400 and changes nothing", async () => {
    const ws = await createWorkspace();
    expect((await put(ws, { days: 7 })).status).toBe(200);
    for (const body of [{ days: 0 }, { days: 3651 }, { days: -1 }, { days: 1.5 }, { days: "30" }, { days: true }, {}]) {
      const res = await put(ws, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const err = await json(res);
      expect(err.error).toBe("validation_error");
      expect(err.message).toMatch(/^days: /);
    }
    expect((await put(ws, [])).status).toBe(400);
    const raw = await call(PATH, { method: "PUT", key: ws.key, body: "{", headers: { "Content-Type": "application/json" } });
    expect(raw.status).toBe(400);
    expect(await get(ws)).toEqual({ success: true, days: 7 });
  });

  it("is the workspace's own, and needs a key", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    expect((await put(a, { days: 90 })).status).toBe(200);
    expect(await get(b)).toEqual({ success: true, days: null });
    expect((await put(b, { days: 5 })).status).toBe(200);
    expect(await get(a)).toEqual({ success: true, days: 90 });
    expect((await call(PATH)).status).toBe(401);
    expect((await call(PATH, { method: "PUT", json: { days: 1 } })).status).toBe(401);
    expect((await call(PATH, { method: "DELETE", key: a.key })).status).toBe(405);
  });
});
