// The fields of a request body that the API ignores, read off the route's own zod schema: a key of an
// object the schema strips (a plain z.object, which drops keys it does not name) is ignored; a loose
// object keeps its unknown keys (they are stored), and a record, `unknown` or `any` takes any key.
// Answered in the X-PromptEdge-Ignored-Fields header (http/openapi.ts), so a caller who misspells a
// field, or sends one PromptLayer reads and this service does not, learns it while the answer keeps
// PromptLayer's shape. Pure: the schema and the parsed JSON in, paths out.
import type { z } from "zod";

/** The most paths named; past it the list ends with "...". */
export const MAX_IGNORED_FIELDS = 20;
const MAX_KEY = 100;

type Def = { type: string } & Record<string, unknown>;
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
// A header value is visible ASCII: a key with anything else (or a comma, the list's separator, or a
// dot, the path's) is percent-encoded, and a long one cut.
const safeKey = (key: string) => {
  const k = /^[\x21-\x7e]*$/.test(key) && !/[,.%]/.test(key) ? key : encodeURIComponent(key).replace(/\./g, "%2E");
  return k.length > MAX_KEY ? `${k.slice(0, MAX_KEY)}...` : k;
};
const join = (path: string, key: string) => (path ? `${path}.${safeKey(key)}` : safeKey(key));

/** The schema a value is read by, past the wrappers that do not change its shape (optional, default, lazy…). */
function unwrap(schema: z.ZodType): z.ZodType | null {
  for (let s = schema, i = 0; i < 32; i++) {
    const def = defOf(s);
    switch (def.type) {
      case "optional":
      case "nullable":
      case "default":
      case "prefault":
      case "catch":
      case "readonly":
      case "nonoptional":
      case "promise":
        s = def.innerType as z.ZodType;
        continue;
      case "lazy":
        s = (def.getter as () => z.ZodType)();
        continue;
      case "pipe":
        // A preprocess (a transform first) may reshape the input: what it reads cannot be told.
        if (defOf(def.in).type === "transform") return null;
        s = def.in as z.ZodType;
        continue;
      default:
        return s;
    }
  }
  return null;
}

function walk(schema: z.ZodType, value: unknown, path: string, out: string[]): void {
  if (out.length > MAX_IGNORED_FIELDS) return;
  const s = unwrap(schema);
  if (!s) return;
  const def = defOf(s);
  switch (def.type) {
    case "object": {
      if (!isObj(value)) return;
      const shape = def.shape as Record<string, z.ZodType>;
      // A catchall (loose: unknown; strict: never, which refuses instead) means unknown keys are not dropped.
      const strips = def.catchall === undefined;
      for (const key of Object.keys(value)) {
        if (Object.hasOwn(shape, key)) walk(shape[key]!, value[key], join(path, key), out);
        else if (strips) out.push(join(path, key));
        else if (def.catchall) walk(def.catchall as z.ZodType, value[key], join(path, key), out);
      }
      return;
    }
    case "record":
      if (isObj(value)) for (const key of Object.keys(value)) walk(def.valueType as z.ZodType, value[key], join(path, key), out);
      return;
    case "array":
      if (Array.isArray(value)) value.forEach((v, i) => walk(def.element as z.ZodType, v, `${path}[${i}]`, out));
      return;
    case "tuple":
      if (Array.isArray(value)) (def.items as z.ZodType[]).forEach((item, i) => walk(item, value[i], `${path}[${i}]`, out));
      return;
    case "union": {
      // The option that fits the value best: the one that ignores least of it, among those of its kind.
      let best: string[] | null = null;
      for (const option of def.options as z.ZodType[]) {
        if (!fits(option, value)) continue;
        const mine: string[] = [];
        walk(option, value, path, mine);
        if (!best || mine.length < best.length) best = mine;
        if (best.length === 0) break;
      }
      if (best) out.push(...best);
      return;
    }
    case "intersection": {
      // A key is ignored only when neither side reads it.
      const left: string[] = [];
      const right: string[] = [];
      walk(def.left as z.ZodType, value, path, left);
      walk(def.right as z.ZodType, value, path, right);
      out.push(...left.filter((p) => right.includes(p)));
      return;
    }
    default:
      return;
  }
}

/** Whether a union's option can be the one that read `value` (an object by an object or record, a list by a list). */
function fits(option: z.ZodType, value: unknown): boolean {
  const s = unwrap(option);
  if (!s) return true;
  const type = defOf(s).type;
  if (type === "any" || type === "unknown" || type === "union" || type === "intersection") return true;
  if (isObj(value)) return type === "object" || type === "record";
  if (Array.isArray(value)) return type === "array" || type === "tuple";
  return type !== "object" && type !== "record" && type !== "array" && type !== "tuple";
}

/** The paths of `value`'s fields that `schema` ignores (drops), at most MAX_IGNORED_FIELDS then "...". */
export function ignoredFields(schema: z.ZodType, value: unknown): string[] {
  const out: string[] = [];
  walk(schema, value, "", out);
  return out.length > MAX_IGNORED_FIELDS ? [...out.slice(0, MAX_IGNORED_FIELDS), "..."] : out;
}
