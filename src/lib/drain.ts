// Draining a refused request body before answering it (see drainBody).

/** How much of a refused body is read and dropped, at most, before the refusal is answered. */
const DRAIN_MAX_BYTES = 128 * 1048576;
const DRAIN_MAX_MS = 15_000;

/**
 * Reads the rest of a body and drops it, within a byte and time budget, then cancels what is left.
 * Answering before the client has finished sending leaves the connection mid-request: locally the
 * next request on the runtime then fails or hangs. Draining first keeps it clean.
 */
export async function drainBody(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const deadline = Date.now() + DRAIN_MAX_MS;
  let read = 0;
  try {
    while (read <= DRAIN_MAX_BYTES && Date.now() < deadline) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
  } catch {
    // The client went away: nothing left to drain.
  }
  await reader.cancel().catch(() => {});
}
