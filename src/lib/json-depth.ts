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
 *
 * Walked depth first with one frame per open level, so what it holds is bounded by `max`, not by the
 * value's width: a 5 MiB body of two million small items allocates nothing per item (a list of
 * pending children, or a pair per item, took some 200 MB there and restarted the isolate).
 */
export function tooDeepAt(value: unknown, max: number): (string | number)[] | null {
  if (!isContainer(value)) return null;
  if (max < 1) return [];
  // A frame is an open container: its object keys (null for an array), the next child's index, and the
  // key it has in its parent (null for the value itself).
  interface Frame { v: object; keys: string[] | null; next: number; key: string | number | null }
  const open = (v: object, key: string | number | null): Frame => ({ v, keys: Array.isArray(v) ? null : Object.keys(v), next: 0, key });
  const frames: Frame[] = [open(value, null)];
  while (frames.length > 0) {
    const top = frames[frames.length - 1];
    const size = top.keys ? top.keys.length : (top.v as unknown[]).length;
    if (top.next >= size) {
      frames.pop();
      continue;
    }
    const key: string | number = top.keys ? top.keys[top.next] : top.next;
    top.next++;
    const child = (top.v as Record<string | number, unknown>)[key];
    if (!isContainer(child)) continue;
    // The child opens level frames.length + 1.
    if (frames.length + 1 > max) return [...frames.slice(1).map((f) => f.key as string | number), key];
    frames.push(open(child, key));
  }
  return null;
}

/** The rule's wording, for error messages. */
export const depthRule = (max: number) => `nests deeper than ${max} levels (objects and arrays)`;
