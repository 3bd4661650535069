// Draining a refused request body before answering it (see drainBody).

export interface DrainLimits {
  /** How much of a refused body is read and dropped, at most, before the refusal is answered. */
  maxBytes: number;
  /** How long a read may wait for the next bytes before the client counts as stalled. */
  idleMs: number;
}

/**
 * 128 MiB: more than any body the platform lets through (Cloudflare refuses bodies over 100 MB at its
 * edge). No limit on the total time: a body that keeps arriving, however slowly, is read to its end.
 */
export const DRAIN_LIMITS: DrainLimits = { maxBytes: 128 * 1048576, idleMs: 10_000 };

/**
 * Reads the rest of a body and drops it, then answers. Answering before the client has finished
 * sending leaves the connection mid-request: locally the answer is then cut (a 413 with no body) or
 * the request dropped, and the next request on the runtime fails or hangs. So the body is read to its
 * end while it keeps coming (a ~75 MB body on a loaded machine takes more than the 15 s this once
 * allowed in all, and was cut); only past `maxBytes`, or after `idleMs` without a byte, is the rest
 * cancelled. Nothing read is kept: memory stays one chunk.
 */
export async function drainBody(reader: ReadableStreamDefaultReader<Uint8Array>, limits: DrainLimits = DRAIN_LIMITS): Promise<void> {
  let read = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    while (read <= limits.maxBytes) {
      const idle = new Promise<"stalled">((resolve) => (timer = setTimeout(() => resolve("stalled"), limits.idleMs)));
      const next = await Promise.race([reader.read(), idle]);
      clearTimeout(timer);
      if (next === "stalled") break;
      if (next.done) return;
      read += next.value.byteLength;
    }
  } catch {
    // The client went away: nothing left to drain.
  } finally {
    clearTimeout(timer);
  }
  await reader.cancel().catch(() => {});
}
