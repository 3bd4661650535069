// ZIP in and out with fflate, streamed. In: an archive is inflated chunk by chunk as it arrives, and
// the zip-bomb limits (file count, bytes per file, total bytes, compression ratio) are checked while
// inflating, so a bomb is refused after at most one small chunk of output. Out: an archive is written
// entry by entry into a ReadableStream, one file's bytes in memory at a time.
import { Unzip, UnzipInflate, Zip, ZipDeflate } from "fflate";
import { ApiError } from "./errors";

export interface UnzipLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  /** Inflated bytes per compressed byte read so far, checked once maxRatioAfterBytes are inflated. */
  maxRatio: number;
  maxRatioAfterBytes: number;
}

export interface UnzippedFile {
  /** The entry's name as written in the archive (not yet normalized). */
  name: string;
  data: Uint8Array;
}

/** Input is fed in pieces this small, so one push can inflate at most ~1 MiB (deflate tops out near 1032:1). */
const PIECE = 1024;
const LOCAL_HEADER = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ARCHIVE = [0x50, 0x4b, 0x05, 0x06];

/** Entries that are not files of the collection: folders, and what macOS Finder adds to archives. */
function isNoise(name: string): boolean {
  return name.endsWith("/") || name.startsWith("__MACOSX/") || name === ".DS_Store" || name.endsWith("/.DS_Store");
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * fflate reads a name without the archive's UTF-8 flag as Latin-1, but many tools write UTF-8 names
 * without setting the flag: such a name is re-read as UTF-8 when its bytes are valid UTF-8.
 */
export function entryName(name: string): string {
  if (!/[\u0080-\u00ff]/.test(name) || /[^\u0000-\u00ff]/.test(name)) return name;
  const bytes = Uint8Array.from(name, (ch) => ch.charCodeAt(0));
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return name;
  }
}

function mib(n: number): string {
  return n % 1048576 === 0 ? `${n / 1048576} MiB` : `${n} bytes`;
}

/**
 * Collects the files of a ZIP archive pushed to it in chunks. Throws ApiError (413 for a size limit,
 * 400 for a broken archive or a suspicious ratio) from push(), at the first chunk that crosses a line.
 */
export class ZipCollector {
  readonly files: UnzippedFile[] = [];
  private readonly unzip: Unzip;
  private compressed = 0;
  private inflated = 0;
  private head: number[] = [];
  private failure: unknown = null;

  constructor(
    private readonly field: string,
    private readonly limits: UnzipLimits,
  ) {
    this.unzip = new Unzip((file) => {
      const name = entryName(file.name);
      if (isNoise(name)) {
        // Still drained so the stream moves on (and counted, so noise cannot carry a bomb); its bytes are not kept.
        file.ondata = (err, data) => {
          this.check(err);
          if (data) this.count(data.length);
        };
        file.start();
        return;
      }
      if (this.files.length >= limits.maxFiles) {
        throw new ApiError("payload_too_large", `${field}: has more than ${limits.maxFiles} files`);
      }
      if (file.compression !== 0 && file.compression !== 8) {
        throw new ApiError("validation_error", `${field}: ${name} uses an unsupported compression method (${file.compression}); use deflate or store`);
      }
      const chunks: Uint8Array[] = [];
      let size = 0;
      file.ondata = (err, data, final) => {
        this.check(err);
        if (data && data.length) {
          size += data.length;
          if (size > limits.maxFileBytes) {
            throw new ApiError("payload_too_large", `${field}: ${name} is larger than ${mib(limits.maxFileBytes)}`);
          }
          this.count(data.length);
          chunks.push(data);
        }
        if (final) this.files.push({ name, data: join(chunks, size) });
      };
      file.start();
    });
    this.unzip.register(UnzipInflate);
  }

  /** Every inflated byte, kept or not, counts toward the archive's total and ratio limits. */
  private count(bytes: number): void {
    const { maxTotalBytes, maxRatioAfterBytes, maxRatio } = this.limits;
    this.inflated += bytes;
    if (this.inflated > maxTotalBytes) {
      throw new ApiError("payload_too_large", `${this.field}: inflates to more than ${mib(maxTotalBytes)}`);
    }
    if (this.inflated > maxRatioAfterBytes && this.inflated > this.compressed * maxRatio) {
      throw new ApiError("validation_error", `${this.field}: compression ratio above ${maxRatio}:1 looks like a zip bomb; refused`);
    }
  }

  /** fflate reports inflate errors through ondata; ours (ApiError) come back the same way. */
  private check(err: unknown): void {
    if (!err) return;
    throw err instanceof ApiError ? err : new ApiError("validation_error", `${this.field}: is not a valid ZIP archive (${describe(err)})`);
  }

  push(chunk: Uint8Array, final = false): void {
    if (this.failure) throw this.failure;
    try {
      if (this.head.length < 4) {
        for (let i = 0; i < chunk.length && this.head.length < 4; i++) this.head.push(chunk[i]);
        if (this.head.length === 4 || final) this.checkSignature();
      }
      for (let at = 0; at < chunk.length; at += PIECE) {
        const piece = chunk.subarray(at, Math.min(chunk.length, at + PIECE));
        this.compressed += piece.length;
        this.unzip.push(piece, final && at + PIECE >= chunk.length);
      }
      if (final && chunk.length === 0) this.unzip.push(new Uint8Array(0), true);
    } catch (err) {
      this.failure = err instanceof ApiError ? err : new ApiError("validation_error", `${this.field}: is not a valid ZIP archive (${describe(err)})`);
      throw this.failure;
    }
  }

  private checkSignature(): void {
    const sig = (s: number[]) => s.every((b, i) => this.head[i] === b);
    if (!sig(LOCAL_HEADER) && !sig(EMPTY_ARCHIVE)) {
      throw new ApiError("validation_error", `${this.field}: is not a ZIP archive`);
    }
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function join(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Inflates a whole archive held in memory (tests, small inputs) with the same limits. */
export function unzipBytes(bytes: Uint8Array, field: string, limits: UnzipLimits): UnzippedFile[] {
  const z = new ZipCollector(field, limits);
  z.push(bytes, true);
  return z.files;
}

export interface ZipEntrySource {
  name: string;
  read(): Promise<Uint8Array>;
}

/**
 * A ZIP archive as a stream: each entry is read (one at a time), deflated and emitted before the
 * next is read, and the consumer's pace drives the reading.
 */
export function zipStream(entries: AsyncIterable<ZipEntrySource>): ReadableStream<Uint8Array> {
  const iterator = entries[Symbol.asyncIterator]();
  let pending: Uint8Array[] = [];
  let finished = false;
  let failed: unknown = null;
  const zip = new Zip((err, chunk, final) => {
    if (err) failed = err;
    else if (chunk.length) pending.push(chunk);
    if (final) finished = true;
  });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Advance until something can be emitted: a file's output, or the end.
      while (pending.length === 0 && !finished && !failed) {
        const next = await iterator.next();
        if (next.done) {
          zip.end();
          break;
        }
        const data = await next.value.read();
        const entry = new ZipDeflate(next.value.name, { level: 6 });
        zip.add(entry);
        entry.push(data, true);
      }
      if (failed) {
        controller.error(failed);
        return;
      }
      for (const chunk of pending) controller.enqueue(chunk);
      pending = [];
      if (finished) controller.close();
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
