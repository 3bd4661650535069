import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { describe, expect, it } from "vitest";
import { retryDelaySeconds } from "../../src/queue/consumer";
import { enqueue, JobMessage } from "../../src/lib/jobs";

const msg = (id: string, body: unknown, attempts = 1) => ({ id, timestamp: new Date(), attempts, body });

describe("the JOBS consumer (unit)", () => {
  it("runs a valid job and acknowledges it", async () => {
    const batch = createMessageBatch("promptedge-jobs", [msg("m1", { v: 1, kind: "ping", workspace_id: 7, token: "unit-1" })]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(await (await env.BLOBS.get("queue-pings/7/unit-1"))?.text()).toMatch(/Z$/);
  });

  it("acknowledges (drops) a message that can never be valid, and runs the rest of the batch", async () => {
    const batch = createMessageBatch("promptedge-jobs", [
      msg("bad-1", { kind: "no-such-job" }),
      msg("bad-2", "not even an object"),
      msg("bad-3", { v: 2, kind: "ping", workspace_id: 1, token: "x" }),
      msg("good", { v: 1, kind: "ping", workspace_id: 7, token: "unit-2" }),
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["bad-1", "bad-2", "bad-3", "good"]);
    expect(await env.BLOBS.head("queue-pings/7/unit-2")).not.toBeNull();
  });

  it("asks for a retry of a job whose handler fails (the delay: retryDelaySeconds)", async () => {
    const failing = { ...env, BLOBS: { put: () => Promise.reject(new Error("R2 down")) } as unknown as R2Bucket };
    const batch = createMessageBatch("promptedge-jobs", [msg("r1", { v: 1, kind: "ping", workspace_id: 7, token: "unit-3" }, 3)]);
    const ctx = createExecutionContext();
    await worker.queue(batch, failing);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([{ msgId: "r1" }]);
  });
});

describe("retryDelaySeconds", () => {
  it("doubles per attempt up to five minutes", () => {
    expect([1, 2, 3, 8, 9, 50].map(retryDelaySeconds)).toEqual([2, 4, 8, 256, 300, 300]);
  });
});

describe("the JOBS queue (end to end)", () => {
  it("delivers an enqueued job to the consumer", async () => {
    const token = `e2e-${crypto.randomUUID()}`;
    await enqueue(env.JOBS, { v: 1, kind: "ping", workspace_id: 9, token });
    let found: R2Object | null = null;
    for (let i = 0; i < 100 && !found; i++) {
      await new Promise((r) => setTimeout(r, 50));
      found = await env.BLOBS.head(`queue-pings/9/${token}`);
    }
    expect(found).not.toBeNull();
  });

  it("refuses to enqueue a message that breaks the schema", async () => {
    await expect(enqueue(env.JOBS, { v: 1, kind: "ping", workspace_id: 0, token: "x" } as JobMessage)).rejects.toThrow();
  });
});
