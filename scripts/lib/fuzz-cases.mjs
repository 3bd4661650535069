// Fuzz cases generated from an OpenAPI document, for the fuzz test and `npm run fuzz`: every
// operation gets malformed JSON, the wrong content type, wrong types, missing and extra fields,
// values one past their limits, long and odd unicode, and junk in path and query parameters.

const ODD = ["", " ", "\u0000", "a\u0000b", "\ud800", "😀".repeat(3000), "x".repeat(70_000), "'; DROP TABLE workspaces; --", "%_\\", "../../etc/passwd", "<script>alert(1)</script>", "null"];
const WRONG = [null, true, -1, 0, 1.5, 2 ** 53 + 2, "x", [], {}, [1, "a", null], { a: { b: { c: [] } } }];
const JUNK_PARAMS = ["0", "-1", "abc", "%00", "1e309", "9".repeat(40), "x".repeat(300), encodeURIComponent("😀\u0000")];
/**
 * Cloudflare refuses request bodies over 100 MB at its edge (413): no deployed Worker sees one. A
 * generated body past that (a list at its item limit + 1, each item holding the 70,000-character
 * string) is left out; locally it would only test the local runtime.
 */
const PLATFORM_MAX_BODY = 100 * 1024 * 1024;

/** Whether a JSON body's UTF-8 bytes fit under PLATFORM_MAX_BODY (counted without encoding it: a body can be 150 MB). */
function fitsPlatform(json) {
  const text = JSON.stringify(json);
  if (text.length * 3 <= PLATFORM_MAX_BODY) return true;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A surrogate pair is 4 bytes in all, 2 per half; JSON.stringify escapes lone ones.
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
    if (bytes > PLATFORM_MAX_BODY) return false;
  }
  return true;
}

/**
 * @param {any} doc the OpenAPI document
 * @param {string} key an API key for the requests (one case per operation goes without it)
 * @param {{variants?: number, seed?: number}} [opts] variants of generated bodies and parameters per operation
 * @returns {{label: string, path: string, init: {method: string, key?: string, json?: unknown, body?: string, headers?: Record<string, string>}}[]}
 */
export function fuzzCases(doc, key, { variants = 2, seed = 0 } = {}) {
  const resolve = (s, depth = 0) => {
    if (!s || depth > 8) return {};
    if (s.$ref) return resolve(doc.components?.schemas?.[s.$ref.split("/").pop()] ?? {}, depth + 1);
    if (s.allOf) return Object.assign({}, ...s.allOf.map((x) => resolve(x, depth + 1)));
    return s;
  };

  /** A value of the schema's type at (or one past) its limits. */
  const sample = (s0, variant, depth = 0) => {
    const s = resolve(s0);
    if (depth > 4) return null;
    if (s.enum) return variant % 3 === 0 ? `${s.enum[0]}-not` : s.enum[0];
    const type = Array.isArray(s.type) ? s.type[0] : (s.type ?? (s.properties ? "object" : undefined));
    switch (type) {
      case "string": {
        if (s.format === "uuid") return variant % 2 ? crypto.randomUUID() : "not-a-uuid";
        if (s.format === "date-time") return variant % 2 ? "2024-02-30T25:61:00Z" : new Date().toISOString();
        if (variant % 4 === 1) return "y".repeat((s.maxLength ?? 300) + 1);
        if (variant % 4 === 2) return ODD[(variant + depth) % ODD.length];
        return "y".repeat(Math.max(s.minLength ?? 1, 1));
      }
      case "integer":
      case "number":
        if (variant % 3 === 1) return (s.maximum ?? 2 ** 31) + 1;
        if (variant % 3 === 2) return (s.minimum ?? 0) - 1;
        return s.minimum ?? 1;
      case "boolean":
        return variant % 2 === 0;
      case "array":
        return variant % 3 === 1
          ? Array.from({ length: (s.maxItems ?? 3) + 1 }, () => sample(s.items ?? {}, variant + 1, depth + 1))
          : [sample(s.items ?? {}, variant, depth + 1)];
      case "object": {
        const out = {};
        for (const [k, p] of Object.entries(s.properties ?? {})) out[k] = sample(p, variant + k.length, depth + 1);
        return out;
      }
      default:
        return WRONG[variant % WRONG.length];
    }
  };

  const pathWith = (template, params, variant) =>
    template.replace(/\{([^}]+)\}/g, (_, name) => {
      const p = resolve(params.find((x) => x.name === name)?.schema);
      if (variant === 0) return p.type === "integer" ? "987654321" : p.format === "uuid" ? crypto.randomUUID() : "no-such-thing";
      return JUNK_PARAMS[(variant + name.length) % JUNK_PARAMS.length];
    });

  const cases = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const m = method.toUpperCase();
      const label = `${m} ${path}`;
      const params = op.parameters ?? [];
      const query = params.filter((p) => p.in === "query");
      const hasJson = Boolean(op.requestBody?.content?.["application/json"]);
      const bodySchema = resolve(op.requestBody?.content?.["application/json"]?.schema);
      for (let i = 0; i < variants; i++) {
        const v = i + seed;
        const qs = new URLSearchParams();
        for (const q of query) qs.set(q.name, String(i === 0 ? "" : sample(q.schema ?? {}, v)));
        const p = pathWith(path, params, i === 0 ? 0 : v);
        const url = query.length ? `${p}?${qs}` : p;
        const json = hasJson ? sample(bodySchema, v) : undefined;
        if (hasJson && !fitsPlatform(json)) continue;
        cases.push({ label, path: url, init: hasJson ? { method: m, key, json } : { method: m, key } });
      }
      if (hasJson) {
        const p = pathWith(path, params, 0);
        const raw = (body, type = "application/json") => ({ method: m, key, body, headers: { "Content-Type": type } });
        const wrong = {};
        for (const [i, k] of Object.keys(bodySchema.properties ?? {}).entries()) wrong[k] = WRONG[(i + seed) % WRONG.length];
        const extra = { ...sample(bodySchema, 3 + seed), unexpected_field: ODD[6] };
        cases.push(
          { label, path: p, init: raw('{"oops": ') },
          { label, path: p, init: raw("plain words", "text/plain") },
          { label, path: p, init: { method: m, key, json: [] } },
          ...(fitsPlatform(extra) ? [{ label, path: p, init: { method: m, key, json: extra } }] : []),
          { label, path: p, init: { method: m, key, json: wrong } },
          { label, path: p, init: raw(`{"a":${"[".repeat(5000)}${"]".repeat(5000)}}`) },
        );
      }
      // Without a key, a protected operation is a 401 before anything else.
      cases.push({ label, path: pathWith(path, params, 0), init: { method: m } });
    }
  }
  return cases;
}

/** The MCP endpoint speaks JSON-RPC: its transport answers a bad request with a JSON-RPC error (docs/mcp.md). */
const JSON_RPC_PATH = /^\/mcp(\?|$)/;

/**
 * Why an answer breaks the rules (a 5xx, or a 4xx not in the error shape), or null. `path`: the
 * request's; on the MCP endpoint a 4xx may also be a JSON-RPC error object.
 */
export function fuzzProblem(status, text, path = "") {
  if (status >= 500) return `${status}: ${text.slice(0, 200)}`;
  if (status < 400) return null;
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return `${status} not JSON: ${text.slice(0, 200)}`;
  }
  if (body.success === false && typeof body.message === "string" && typeof body.error === "string") return null;
  const jsonRpcError = body.jsonrpc === "2.0" && Number.isInteger(body.error?.code) && typeof body.error?.message === "string";
  return JSON_RPC_PATH.test(path) && jsonRpcError ? null : `${status} not the error shape: ${text.slice(0, 200)}`;
}
