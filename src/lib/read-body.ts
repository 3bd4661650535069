// Reading a whole request body under a byte cap, gunzipped when it says so: the cap holds for the
// bytes received and again for the bytes inflated, counted as they stream, so neither a large body
// nor a small gzip bomb is ever held whole past the cap.
import { drainBody } from "./drain";
import { ApiError } from "./errors";

/** Reads `body` (gzip when `gzip`) into one buffer of at most `maxBytes` bytes, or answers 413 / 400. */
export async function readBodyCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number, gzip: boolean): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const tooLarge = (what: string) => new ApiError("payload_too_large", `request body is larger than ${maxBytes} bytes${what}`);
  const source = body.getReader();
  let received = 0;
  let overReceived = false;
  // Counts what arrives; past the cap it drains the rest (so the connection stays usable) and stops.
  const counted = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await source.read();
      if (done) return controller.close();
      received += value.byteLength;
      if (received > maxBytes) {
        overReceived = true;
        await drainBody(source);
        controller.error(tooLarge(""));
        return;
      }
      controller.enqueue(value);
    },
    cancel(reason) {
      return source.cancel(reason);
    },
  });
  const stream = gzip ? counted.pipeThrough(new DecompressionStream("gzip")) : counted;
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        await drainBody(source);
        throw tooLarge(" once decompressed");
      }
      parts.push(value);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (overReceived) throw tooLarge("");
    // Only the gzip stream fails on its own: the body is not gzip, or is cut short.
    await drainBody(source);
    throw new ApiError("validation_error", `body: is not valid gzip (${err instanceof Error ? err.message : String(err)})`);
  }
  if (overReceived) throw tooLarge("");
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
