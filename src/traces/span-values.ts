// Pure: reading attribute values of any type, as spans carry them (strings, numbers, JSON text,
// OTLP kvlists and arrays, flattened lists). A value of the wrong type never throws: it reads as absent
// or as its text. For the span mapping (span-mapping.ts, span-messages.ts).
import type { Obj } from "../lib/obj";

/** A string attribute; numbers and booleans as their text; anything else is absent. */
export function str(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v === "boolean") return String(v);
  return null;
}

/** A string attribute with something in it. */
export function text(v: unknown): string | null {
  const s = str(v);
  return s !== null && s.trim() !== "" ? s : null;
}

/** A non-negative whole number (token counts, versions): a number or a string of digits. */
export function count(v: unknown): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d{1,15}\s*$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** JSON carried as a string (or already structured, as OTLP kvlists and arrays arrive); undefined when unreadable. */
export function json(v: unknown): unknown {
  if (typeof v !== "string") return v === null ? undefined : v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** A string as itself; any other value as its JSON text. */
export function asText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === undefined || v === null) return "";
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

/** An object from entries whose keys come from the span: `__proto__` becomes a key like any other. */
export const record = <T>(entries: Iterable<[string, T]>): Record<string, T> => Object.fromEntries(entries);

/**
 * Flattened lists (`prefix.N.rest`), as OpenLLMetry and OpenInference write them: one object per
 * index, in index order, keyed by the rest of the attribute name.
 */
export function indexed(attrs: Obj, prefix: string): Obj[] {
  const groups = new Map<number, [string, unknown][]>();
  const head = `${prefix}.`;
  for (const [key, value] of Object.entries(attrs)) {
    if (!key.startsWith(head)) continue;
    const rest = key.slice(head.length);
    const dot = rest.indexOf(".");
    const index = rest.slice(0, dot);
    if (dot <= 0 || !/^\d{1,9}$/.test(index)) continue;
    const group = groups.get(Number(index)) ?? [];
    group.push([rest.slice(dot + 1), value]);
    groups.set(Number(index), group);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([, entries]) => record(entries));
}

/** The entries of `attrs` under `prefix.` with the prefix cut off (metadata maps). */
export function under(attrs: Obj, prefix: string): [string, unknown][] {
  return Object.entries(attrs)
    .filter(([k]) => k.startsWith(prefix) && k.length > prefix.length)
    .map(([k, v]) => [k.slice(prefix.length), v]);
}
