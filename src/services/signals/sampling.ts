// Pure: which logs a hook (or a backfill) samples. The draw is a hash of (signal, source, log), so the
// same log is always decided the same way: a redelivered index message, a sweeper's second look or a
// backfill started again samples exactly the logs it sampled before, and never judges one twice.
import { createHash } from "node:crypto";

/** Where a judgement comes from: a hook of the signal, or one of its backfills. */
export type SampleSource = { hook: number } | { backfill: number };

/** A uniform number in [0, 1) for the key: the first 52 bits of its SHA-256. */
export function unitDraw(key: string): number {
  const digest = createHash("sha256").update(key).digest();
  // 4 bytes, then 20 bits of the fifth and sixth: 52 bits, exact in a double.
  const high = digest.readUInt32BE(0);
  const low = (digest.readUInt32BE(4) >>> 12) & 0xfffff;
  return (high * 2 ** 20 + low) / 2 ** 52;
}

const sourceKey = (source: SampleSource) => ("hook" in source ? `h${source.hook}` : `b${source.backfill}`);

/** Whether the log is in the sample of `rate` (0..1) for this signal and source. */
export function isSampled(signalId: number, source: SampleSource, requestId: number, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  return unitDraw(`${signalId}:${sourceKey(source)}:${requestId}`) < rate;
}
