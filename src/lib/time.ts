// Timestamps in: ISO 8601 (Z, an offset, or none meaning UTC) or an epoch number (seconds below
// 1e11, milliseconds otherwise, fractions allowed). Stored as epoch milliseconds; out as ISO 8601 UTC.

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

const EPOCH_SECONDS_BELOW = 100_000_000_000;
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export type ParsedTime = { ok: true; ms: number } | { ok: false; reason: string };

export function parseTimestamp(value: unknown): ParsedTime {
  if (typeof value === "number") return fromEpoch(value);
  if (typeof value !== "string") return { ok: false, reason: "must be an ISO 8601 date-time string or an epoch number" };
  const s = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(s)) return fromEpoch(Number(s));
  const m = ISO_RE.exec(s);
  if (!m) return { ok: false, reason: "must be an ISO 8601 date-time string or an epoch number" };
  const [, y, mo, d, h = "0", mi = "0", sec = "0", frac = "", tz] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(sec);
  // Checked before Date.UTC, which reads years 0-99 as 1900-1999.
  if (year < 1970) return { ok: false, reason: "is out of range (1970 to 9999)" };
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return { ok: false, reason: "is not a valid calendar date-time" };
  }
  const ms = frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0;
  let t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(t);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) {
    return { ok: false, reason: "is not a valid calendar date-time" };
  }
  if (tz && tz !== "Z" && tz !== "z") {
    const sign = tz[0] === "-" ? -1 : 1;
    const digits = tz.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return { ok: false, reason: "has an invalid UTC offset" };
    t -= sign * (oh * 60 + om) * 60_000;
  }
  if (t < 0 || t > MAX_MS) return { ok: false, reason: "is out of range (1970 to 9999)" };
  return { ok: true, ms: t };
}

function fromEpoch(n: number): ParsedTime {
  if (!Number.isFinite(n) || n < 0) return { ok: false, reason: "must be a non-negative epoch number" };
  const ms = n < EPOCH_SECONDS_BELOW ? n * 1000 : n;
  if (ms > MAX_MS) return { ok: false, reason: "is out of range (1970 to 9999)" };
  return { ok: true, ms: Math.floor(ms) };
}

export function toIso(ms: number): string;
export function toIso(ms: number | null | undefined): string | null;
export function toIso(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined) return null;
  return new Date(ms).toISOString();
}

/** A duration setting in ms ([vars]): a number ≥ 0, else `fallback` (unset or not a number). */
export function msSetting(value: string | undefined, fallback: number): number {
  const n = Number(value ?? fallback);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}
