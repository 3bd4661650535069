import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "./helpers/api";

describe("health", () => {
  it("answers without a key", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, status: "ok" });
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
  });
});

describe("smoke", () => {
  it("logs", async () => {
    const ws = await createWorkspace();
    const res = await call("/log-request", {
      method: "POST",
      key: ws.key,
      json: {
        provider: "openai",
        model: "gpt-4o",
        input: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
        output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "yo" }] }] },
        request_start_time: "2024-01-15T10:30:00Z",
        request_end_time: "2024-01-15T10:30:05Z",
        tags: ["a"],
      },
    });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
  });
});
