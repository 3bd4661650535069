// Value coercions shared by the blocks: cells and node outputs arrive as strings, numbers, booleans,
// objects or null, and each block reads them the way a user would expect.
import { BlockError, type BlockInputs } from "./types";

/** The named input; a missing name is an error (a typo in a source would otherwise read as null). */
export function input(inputs: BlockInputs, name: string): unknown {
  if (!Object.prototype.hasOwnProperty.call(inputs, name)) throw new BlockError(`input "${name}" is not available`);
  return inputs[name];
}

/** Text of a value: strings as they are, null/undefined as "", everything else as JSON. */
export function toText(v: unknown): string {
  if (v == null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  return JSON.stringify(v);
}

/** A finite number, or undefined: numbers, numeric strings (trimmed) and booleans are numbers. */
export function asNumber(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string") {
    const s = v.trim();
    if (s === "" || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
    const n = Number(s);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

export function toNumber(v: unknown, what: string): number {
  const n = asNumber(v);
  if (n === undefined) throw new BlockError(`${what} is not a number: ${preview(v)}`);
  return n;
}

export type Parsed = { ok: true; value: unknown } | { ok: false };

/** JSON.parse that reports failure instead of throwing. */
export function tryParseJson(s: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

/** Structured data of a value: strings are parsed as JSON, anything else is already structured. */
export function toStructured(v: unknown, what: string): unknown {
  if (typeof v !== "string") return v;
  const p = tryParseJson(v.trim());
  if (!p.ok) throw new BlockError(`${what} is not valid JSON: ${preview(v)}`);
  return p.value;
}

/** Deep equality of JSON values; object key order does not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object), kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual((a as any)[k], (b as any)[k]));
}

/** A short rendering of a value for error messages (never the whole of a large value). */
export function preview(v: unknown, max = 80): string {
  const s = typeof v === "string" ? JSON.stringify(v) : toText(v) || String(v);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
