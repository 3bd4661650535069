// Request bodies under a byte cap. capStream counts a body as it streams: past the cap it drains the
// rest (so the connection stays usable) and errors the stream. readBodyCapped reads a whole body that
// way, gunzipped when it says so, with the cap holding again for the inflated bytes: neither a large
// body nor a small gzip bomb is ever held whole past the cap.
import { joinBytes } from "./bytes";
import { drainBody } from "./drain";
import { ApiError } from "./errors";

export interface CappedStream {
  stream: ReadableStream<Uint8Array>;
  /** Whether the body went past the cap (the stream then errored with `tooLarge()`). */
  exceeded(): boolean;
}

/**
 * `body` counted as it streams; past `maxBytes` the rest is drained and the stream errors with
 * `tooLarge()`. A reader that stops early cancels the body, or with `drainOnCancel` drains it.
 */
export function capStream(body: ReadableStream<Uint8Array>, maxBytes: number, tooLarge: () => Error, drainOnCancel = false): CappedStream {
  const source = body.getReader();
  let total = 0;
  let exceeded = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await source.read();
      if (done) return controller.close();
      total += value.byteLength;
      if (total > maxBytes) {
        exceeded = true;
        await drainBody(source);
        controller.error(tooLarge());
        return;
      }
      controller.enqueue(value);
    },
    cancel(reason) {
      return drainOnCancel ? drainBody(source) : source.cancel(reason);
    },
  });
  return { stream, exceeded: () => exceeded };
}

/** Reads `body` (gzip when `gzip`) into one buffer of at most `maxBytes` bytes, or answers 413 / 400. */
export async function readBodyCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number, gzip: boolean): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const tooLarge = (what = "") => new ApiError("payload_too_large", `request body is larger than ${maxBytes} bytes${what}`);
  // Refused mid-way (a bomb, bad gzip), the rest of the body is drained before the answer.
  const counted = capStream(body, maxBytes, tooLarge, true);
  const reader = (gzip ? counted.stream.pipeThrough(new DecompressionStream("gzip")) : counted.stream).getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        // The inflated bytes passed the cap: what is still to come of the body is read and dropped.
        await reader.cancel().catch(() => {});
        throw tooLarge(" once decompressed");
      }
      parts.push(value);
    }
  } catch (err) {
    if (counted.exceeded()) throw tooLarge();
    if (err instanceof ApiError) throw err;
    // Only the gzip stream fails on its own: the body is not gzip, or is cut short.
    await reader.cancel().catch(() => {});
    throw new ApiError("validation_error", `body: is not valid gzip (${err instanceof Error ? err.message : String(err)})`);
  }
  return joinBytes(parts, size);
}
