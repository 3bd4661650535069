// JSON text byte-equal to Python's json.dumps(value, sort_keys=True): keys sorted by code point,
// separators ", " and ": ", every non-ASCII character (and DEL) escaped as \uXXXX (lowercase hex,
// UTF-16 units, as ensure_ascii does) and floats written as Python's repr writes them. Webhook
// receivers re-serialize what they parse to check a body, so the bytes must match exactly.

const SHORT: Record<number, string> = { 0x22: '\\"', 0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x08: "\\b", 0x0c: "\\f" };

function pyString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const short = SHORT[c];
    if (short) out += short;
    else if (c >= 0x20 && c <= 0x7e) out += s[i];
    else out += "\\u" + c.toString(16).padStart(4, "0");
  }
  return out + '"';
}

/**
 * A number as Python prints what json.loads made of JavaScript's text: integral values stay integers
 * (json.loads reads "3" as int), other values follow float repr: exponent form below 1e-4 and from
 * 1e16, with a sign and at least two exponent digits.
 */
function pyNumber(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError("JSON cannot hold NaN or Infinity");
  const js = JSON.stringify(n);
  if (!/[.e]/.test(js)) return js;
  const abs = Math.abs(n);
  const text = abs !== 0 && (abs < 1e-4 || abs >= 1e16) ? n.toExponential() : js;
  const m = /^(-?[\d.]+)e([+-])(\d+)$/.exec(text);
  if (!m) return text;
  return `${m[1]}e${m[2]}${m[3].padStart(2, "0")}`;
}

/** Code-point order (Python sorts str keys so); JavaScript's default sort compares UTF-16 units. */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return pyNumber(value);
    case "string":
      return pyString(value);
    case "object": {
      if (Array.isArray(value)) return value.length === 0 ? "[]" : `[${value.map((v) => pythonJsonDumps(v)).join(", ")}]`;
      const keys = Object.keys(value as object).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort(byCodePoint);
      if (keys.length === 0) return "{}";
      return `{${keys.map((k) => `${pyString(k)}: ${pythonJsonDumps((value as Record<string, unknown>)[k])}`).join(", ")}}`;
    }
    default:
      throw new TypeError(`JSON cannot hold a ${typeof value}`);
  }
}
