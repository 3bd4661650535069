// ZIP in and out with fflate, streamed. In: an archive is inflated chunk by chunk as it arrives, and
// the zip-bomb limits (file count, bytes per file, total bytes, compression ratio) are checked while
// inflating, so a bomb is refused after at most one small chunk of output. Out: an archive is written
// entry by entry into a ReadableStream, one file's bytes in memory at a time.
import { Unzip, UnzipInflate, Zip, ZipDeflate } from "fflate";
import { ApiError } from "./errors";
import { joinBytes } from "./bytes";

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
/**
 * The end of the input kept to check the central directory against what was inflated: the directory
 * of an archive within the upload limits (a few thousand entries) and the end record fit well inside.
 */
const TAIL_MAX = 4 * 1048576 + 65_557;
const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;

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
  /** Every entry fflate met (its raw name), noise included, in order. */
  private readonly entries: string[] = [];
  private tail: Uint8Array[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(
    private readonly field: string,
    private readonly limits: UnzipLimits,
  ) {
    this.unzip = new Unzip((file) => {
      this.entries.push(file.name);
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
        if (final) this.files.push({ name, data: joinBytes(chunks, size) });
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
      this.keepTail(chunk);
      for (let at = 0; at < chunk.length; at += PIECE) {
        const piece = chunk.subarray(at, Math.min(chunk.length, at + PIECE));
        this.compressed += piece.length;
        this.unzip.push(piece, final && at + PIECE >= chunk.length);
      }
      if (final && chunk.length === 0) this.unzip.push(new Uint8Array(0), true);
      if (final) this.verifyDirectory();
    } catch (err) {
      this.failure = err instanceof ApiError ? err : new ApiError("validation_error", `${this.field}: is not a valid ZIP archive (${describe(err)})`);
      throw this.failure;
    }
  }

  private keepTail(chunk: Uint8Array): void {
    this.total += chunk.length;
    if (chunk.length === 0) return;
    // Chunks are copied: the caller may reuse its buffer.
    this.tail.push(chunk.slice(Math.max(0, chunk.length - TAIL_MAX)));
    this.tailBytes += Math.min(chunk.length, TAIL_MAX);
    while (this.tail.length > 1 && this.tailBytes - this.tail[0].length >= TAIL_MAX) this.tailBytes -= this.tail.shift()!.length;
  }

  /**
   * An archive ends with its end-of-central-directory record, and its central directory lists the
   * entries it holds. A cut archive (a truncated upload) lacks them or disagrees with what was read:
   * refused, so no file of it is ever taken for the whole.
   */
  private verifyDirectory(): void {
    const broken = (why: string) => new ApiError("validation_error", `${this.field}: is not a complete ZIP archive (${why})`);
    const buf = joinBytes(this.tail, this.tailBytes);
    const base = this.total - buf.length; // absolute offset of buf[0]
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    let eocd = -1;
    for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65_557); i--) {
      if (view.getUint32(i, true) === EOCD && i + 22 + view.getUint16(i + 20, true) === buf.length) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) throw broken("its end-of-central-directory record is missing; was the file cut short?");
    let count = view.getUint16(eocd + 10, true);
    let size = view.getUint32(eocd + 12, true);
    let offset = view.getUint32(eocd + 16, true);
    if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) {
      const loc = eocd - 20;
      if (loc < 0 || view.getUint32(loc, true) !== ZIP64_LOCATOR) throw broken("its ZIP64 locator is missing");
      const rec = Number(view.getBigUint64(loc + 8, true)) - base;
      if (rec < 0 || rec + 56 > buf.length || view.getUint32(rec, true) !== ZIP64_EOCD) throw broken("its ZIP64 end record is missing");
      count = Number(view.getBigUint64(rec + 32, true));
      size = Number(view.getBigUint64(rec + 40, true));
      offset = Number(view.getBigUint64(rec + 48, true));
    }
    const start = offset - base;
    if (start < 0) throw broken("its central directory is larger than this service reads");
    if (start + size > eocd) throw broken("its central directory overruns the end record");
    const names: string[] = [];
    let at = start;
    for (let n = 0; n < count; n++) {
      if (at + 46 > start + size || view.getUint32(at, true) !== CENTRAL) throw broken(`central directory entry ${n + 1} of ${count} is damaged`);
      const utf8 = (view.getUint16(at + 8, true) & 0x800) !== 0;
      const nameLen = view.getUint16(at + 28, true);
      const raw = buf.subarray(at + 46, at + 46 + nameLen);
      names.push(utf8 ? new TextDecoder().decode(raw) : String.fromCharCode(...raw));
      at += 46 + nameLen + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    }
    if (names.length !== this.entries.length) throw broken(`its central directory lists ${names.length} entries but ${this.entries.length} were read`);
    const differs = names.findIndex((name, i) => name !== this.entries[i]);
    if (differs >= 0) throw broken(`its central directory names ${JSON.stringify(names[differs])} where ${JSON.stringify(this.entries[differs])} was read`);
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
