// drainBody: a refused body is read to its end while it keeps coming, so the refusal is answered whole
// (a ~75 MB body on a loaded machine outlasted the 15 s once allowed in all, and its 413 went out cut:
// empty, or the request dropped); only a client that stalls, or a body past the byte cap, is cut off.
import { afterEach, describe, expect, it, vi } from "vitest";
import { drainBody, DRAIN_LIMITS } from "../../src/lib/drain";

/** A body of `chunks` 1 KiB chunks, each made by `onPull` (which may move the clock or never answer); it records what happened to it. */
function body(chunks: number, onPull: (n: number) => Promise<void> | void = () => {}) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (seen.pulled === chunks) return controller.close();
      await onPull(seen.pulled);
      seen.pulled++;
      controller.enqueue(new Uint8Array(1024));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { reader: stream.getReader(), seen };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("drainBody", () => {
  it("reads a body that keeps coming to its end, however long it takes in all", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    // Each chunk arrives a second after the one before: 40 s for the whole body, never idle.
    const { reader, seen } = body(40, () => void vi.setSystemTime(Date.now() + 1000));
    await drainBody(reader);
    expect(seen).toEqual({ pulled: 40, cancelled: false });
  });

  it("cuts off a client that stops sending, after the idle time", async () => {
    const { reader, seen } = body(10, (n) => (n === 3 ? new Promise<void>(() => {}) : undefined));
    await drainBody(reader, { ...DRAIN_LIMITS, idleMs: 50 });
    expect(seen).toEqual({ pulled: 3, cancelled: true });
  });

  it("stops past the byte cap, and the cap is above the largest body the platform lets through (100 MB)", async () => {
    const { reader, seen } = body(100);
    await drainBody(reader, { ...DRAIN_LIMITS, maxBytes: 2048 });
    // Three chunks read (3 KiB > 2 KiB), and at most the one the stream had pulled ahead.
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(4);
    expect(DRAIN_LIMITS.maxBytes).toBeGreaterThan(100 * 1000 * 1000);
  });
});
