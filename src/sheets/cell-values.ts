// How a cell's value is stored and read back: `display_value` is the text a user sees; `value` (JSON)
// is kept only when it differs from that text (a number, an object, or an explicit value), so plain
// text cells store one string. Pure, shared by edits, added rows and computed results.

export interface StoredValue {
  display: string | null;
  /** JSON text, or null meaning "the same as display". */
  json: string | null;
}

/** The display text of any value: strings as they are, null as null, the rest as JSON. */
export function displayOf(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * Most bytes (UTF-8) a cell's display_value and value may take together. The object's SQLite refuses a
 * row over 2 MiB (SQLITE_TOOBIG), and a structured value is stored twice (its JSON text is its display).
 */
export const MAX_CELL_BYTES = 2_000_000;

/** UTF-8 length of a string, without encoding it. */
export function utf8Bytes(s: string | null): number {
  if (s === null) return 0;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** The bytes a stored value takes. */
export function storedBytes(v: StoredValue): number {
  return utf8Bytes(v.display) + utf8Bytes(v.json);
}

/** A value given alone (a row's initial value, a computed result). */
export function storeValue(v: unknown): StoredValue {
  if (v === null || v === undefined || typeof v === "string") return { display: v ?? null, json: null };
  return { display: JSON.stringify(v), json: JSON.stringify(v) };
}

/**
 * A cell edit: display_value and/or value. With only display_value the value is that text; with only
 * value the display is its text; with both, both are kept as given.
 */
export function storeEdit(edit: { display_value?: string | null; value?: unknown }): StoredValue {
  const hasValue = Object.prototype.hasOwnProperty.call(edit, "value") && edit.value !== undefined;
  if (!hasValue) return { display: edit.display_value ?? null, json: null };
  if (!Object.prototype.hasOwnProperty.call(edit, "display_value")) return storeValue(edit.value);
  const display = edit.display_value ?? null;
  if (typeof edit.value === "string" && edit.value === display) return { display, json: null };
  if (edit.value === null && display === null) return { display: null, json: null };
  return { display, json: JSON.stringify(edit.value) };
}

/** The value a block reads from a stored cell (null for an empty one). */
export function readValue(display: string | null, json: string | null): unknown {
  return json === null ? display : JSON.parse(json);
}

/** Deepest nesting a value sent to a sheet may have: deeper JSON overflows the stack on its way to the object. */
export const MAX_JSON_DEPTH = 64;

/** How deep `v` nests (a scalar is 0, `[1]` is 1), counted without recursion; stops counting past `cap`. */
export function jsonDepth(v: unknown, cap = MAX_JSON_DEPTH + 1): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== "object") continue;
    if (d + 1 > max) max = d + 1;
    if (max > cap) return max;
    for (const child of Array.isArray(x) ? x : Object.values(x)) stack.push([child, d + 1]);
  }
  return max;
}
