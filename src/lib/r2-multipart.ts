// Writes a stream of bytes to R2 in parts of one fixed size (R2 wants every part but the last the
// same size, at least 5 MiB), holding one part in memory at a time. Data that fits in one part is a
// plain put. Nothing is visible in the bucket until finish(); abort() leaves nothing behind.

export const MIN_PART_BYTES = 5 * 1024 * 1024;

export class R2MultipartWriter {
  private buf: Uint8Array | null = null;
  private fill = 0;
  private upload: R2MultipartUpload | null = null;
  private readonly parts: R2UploadedPart[] = [];
  private total = 0;

  constructor(
    private readonly bucket: R2Bucket,
    readonly key: string,
    private readonly partBytes: number,
    private readonly options: R2MultipartOptions = {},
  ) {
    if (partBytes < MIN_PART_BYTES) throw new Error(`R2 parts must be at least ${MIN_PART_BYTES} bytes`);
  }

  get bytesWritten(): number {
    return this.total;
  }

  get partCount(): number {
    return this.parts.length;
  }

  async write(bytes: Uint8Array): Promise<void> {
    let from = 0;
    while (from < bytes.length) {
      this.buf ??= new Uint8Array(this.partBytes);
      const n = Math.min(bytes.length - from, this.partBytes - this.fill);
      this.buf.set(bytes.subarray(from, from + n), this.fill);
      this.fill += n;
      this.total += n;
      from += n;
      if (this.fill === this.partBytes) await this.flushPart();
    }
  }

  private async flushPart(): Promise<void> {
    this.upload ??= await this.bucket.createMultipartUpload(this.key, this.options);
    // Awaited before the buffer is refilled, so one part buffer serves the whole upload.
    this.parts.push(await this.upload.uploadPart(this.parts.length + 1, this.buf!.subarray(0, this.fill)));
    this.fill = 0;
  }

  /** Stores what was written; returns the object's size. */
  async finish(): Promise<number> {
    if (!this.upload) {
      await this.bucket.put(this.key, (this.buf ?? new Uint8Array(0)).subarray(0, this.fill), this.options);
    } else {
      if (this.fill > 0) await this.flushPart();
      await this.upload.complete(this.parts);
    }
    this.buf = null;
    return this.total;
  }

  async abort(): Promise<void> {
    this.buf = null;
    if (this.upload) await this.upload.abort().catch(() => undefined);
  }
}
