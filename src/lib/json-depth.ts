// The one depth rule for free-form JSON (attributes, metadata, inputs, request and response bodies,
// configs…): SQLite's JSON functions refuse a document nested over 1000 levels, which made a 500 of
// a deep value deep inside a request; and a deep value costs every reader a recursion. Depth is
// counted without recursion, so a body of a million brackets is measured, not a stack overflow.

/**
 * The deepest a JSON request body may nest (objects and arrays, counted from the body itself): room
 * for a free-form field's own rule (an evaluation configuration: 64 levels below the field) a few
 * levels down, and far below SQLite's 1,000.
 */
export const MAX_JSON_DEPTH = 100;

/** The deepest a span's or log record's attribute value may nest (OTLP's AnyValue rule; spans-bulk keeps the same). */
export const MAX_ATTRIBUTE_DEPTH = 16;

const isContainer = (v: unknown): v is object => v !== null && typeof v === "object";

/**
 * The path of the first value nested deeper than `max` levels (an object or array is one level; a
 * scalar none), or null when none is: `[]` is the value itself, then keys and indexes.
 */
export function tooDeepAt(value: unknown, max: number): (string | number)[] | null {
  // Each entry links to its parent instead of copying its path: a deep value costs one entry a level.
  interface Entry { v: unknown; depth: number; key: string | number | null; parent: Entry | null }
  const stack: Entry[] = [{ v: value, depth: 0, key: null, parent: null }];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (!isContainer(e.v)) continue;
    if (e.depth + 1 > max) {
      const path: (string | number)[] = [];
      for (let at: Entry | null = e; at && at.key !== null; at = at.parent) path.unshift(at.key);
      return path;
    }
    const kids: [string | number, unknown][] = Array.isArray(e.v) ? e.v.map((x, i) => [i, x]) : Object.entries(e.v);
    for (const [key, x] of kids) if (isContainer(x)) stack.push({ v: x, depth: e.depth + 1, key, parent: e });
  }
  return null;
}

/** The rule's wording, for error messages. */
export const depthRule = (max: number) => `nests deeper than ${max} levels (objects and arrays)`;
