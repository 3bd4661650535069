// A body that arrives in pieces, for the tests of code that reads streams: boundaries (of parts, of
// events, of multi-byte characters) fall across reads.

/** A stream that delivers `bytes` in pieces of `size` bytes (1 puts every boundary across reads). */
export function streamOf(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}
