// The layout of src/ (docs/conventions.md, "Layout of the code"), checked over the import graph: the
// floors (a file imports only a strictly lower floor or its own unit; type-only imports count too),
// the faces (another unit enters prompts/, logs/, sheets/, traces/ or a services domain through its
// index), no circle between files (type-only imports count too), no flat file in services/, no file
// over 700 lines, and no workerd-only module behind app.ts
// (the console's type generator loads app.ts in Node). Pure Node: it reads the sources with node:fs, in about a
// second, so it lives in the node project (the workerd projects cannot read the host's files).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/**
 * The floors, lowest first. A unit is a top-level folder of src/, a root file, or (inside services/)
 * a domain folder `services/<domain>`. Units on one floor never import each other.
 */
const FLOORS: string[][] = [
  ["lib", "types"],
  ["db"],
  ["filters", "converters", "blocks", "sandbox", "redaction"],
  ["analytics"],
  ["prompts"],
  ["logs"],
  ["traces"],
  ["base-deps.ts"],
  ["sheets", "realtime"],
  ["env.ts"],
  ["deps.ts"],
  ["services/workspace", "services/webhooks"],
  ["services/registry"],
  ["services/datasets", "services/tables", "services/workflows", "services/signals", "services/releases"],
  ["services/ingest", "services/evaluations"],
  ["queue"],
  ["http", "mcp"],
  ["routes"],
  ["app.ts"],
  ["index.ts"],
];

/** Units entered only through their index.ts from outside. */
const FACES = (unit: string) => ["prompts", "logs", "sheets", "traces", "redaction", "mcp"].includes(unit) || unit.startsWith("services/");

/**
 * Imports that pass by a face, each for a reason. The Worker's entry exports the sheet Durable
 * Object's class to the runtime, so it needs the class as a value; sheets/index.ts exports it as a
 * type only, since sheet-object.ts imports `cloudflare:workers` and everything a route imports from
 * the face is behind app.ts (see the last check).
 */
const PAST_FACES = new Set(["index.ts → sheets/sheet-object.ts"]);

const MAX_LINES = 700;
const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

const files = readdirSync(SRC, { recursive: true, encoding: "utf8" })
  .map((f) => f.split("\\").join("/"))
  .filter((f) => f.endsWith(".ts") && statSync(join(SRC, f)).isFile())
  .sort();
const sources = new Map(files.map((f) => [f, readFileSync(join(SRC, f), "utf8")]));

interface Edge {
  from: string;
  line: number;
  spec: string;
  to: string;
  typeOnly: boolean;
}

// One import or re-export: `import x, { y } from "…"`, `import type …`, `import "…"` (side effect),
// `export * from "…"`, `export { a, type b } from "…"`, `import("…")`. The clause between the keyword
// and `from` may span lines and hold comments. Every specifier is taken, relative or not: relative
// ones are the graph's edges, the others (packages, `cloudflare:*`) are kept per file.
const CLAUSE = String.raw`(?:[\w*{}\s,$]|//[^\n]*\n|/\*[\s\S]*?\*/)*?`;
const IMPORT = new RegExp(
  String.raw`(?:^|[;\s])(import|export)\s+(type\s+)?(?:${CLAUSE}\s*from\s*)?["']([^"'\s]+)["']|\bimport\(\s*["']([^"'\s]+)["']\s*\)`,
  "g",
);
/**
 * Every place a specifier can stand (after `from`, `import` or `import(`), counted apart from IMPORT:
 * a statement IMPORT fails to read shows as a difference between the two for its file. A specifier
 * holds no space, which keeps prose (`the traces they were drawn from", …`) out of the count.
 */
const SPECIFIERS = /(?<=[\s}*])from\s*["'][^"'\s]+["']|\bimport\s*["'][^"'\s]+["']|\bimport\(\s*["'][^"'\s]+["']/g;
const stripComments = (s: string) => s.replace(/\/\/[^\n]*\n|\/\*[\s\S]*?\*\//g, " ");

function resolve(from: string, spec: string): string | null {
  const base = relative(SRC, join(SRC, dirname(from), spec)).split("\\").join("/");
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base]) if (sources.has(candidate)) return candidate;
  return null;
}

/** A non-relative specifier (a package, `cloudflare:*`) in a file. */
interface External {
  from: string;
  line: number;
  spec: string;
  typeOnly: boolean;
}

const edges: Edge[] = [];
const externals: External[] = [];
const unresolved: string[] = [];
/** Files where SPECIFIERS counts more (or fewer) specifiers than IMPORT parsed. */
const miscounted: string[] = [];
for (const [file, text] of sources) {
  let parsed = 0;
  for (const m of text.matchAll(IMPORT)) {
    parsed++;
    const spec = m[3] ?? m[4];
    const line = text.slice(0, m.index).split("\n").length + (m[0].startsWith("\n") ? 1 : 0);
    const clause = stripComments(m[0]);
    const names = /\{([^}]*)\}/.exec(clause)?.[1].split(",").map((n) => n.trim()).filter(Boolean);
    const typeOnly = Boolean(m[2]) || (m[1] === "import" && !!names?.length && names.every((n) => n.startsWith("type ")) && !/import\s+[\w$]+\s*,/.test(clause));
    if (!spec.startsWith(".")) {
      externals.push({ from: file, line, spec, typeOnly });
      continue;
    }
    const to = resolve(file, spec);
    if (!to) {
      unresolved.push(`src/${file}:${line} ${spec}`);
      continue;
    }
    edges.push({ from: file, line, spec, to, typeOnly });
  }
  const counted = [...text.matchAll(SPECIFIERS)].length;
  if (counted !== parsed) miscounted.push(`src/${file}: ${counted} specifiers, ${parsed} parsed`);
}

/** The unit of a file: services/<domain>, a top-level folder, or the root file itself. */
function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts.length === 1) return parts[0];
  if (parts[0] === "services" && parts.length > 2 && FLOORS.some((f) => f.includes(`services/${parts[1]}`))) return `services/${parts[1]}`;
  return parts[0];
}

const floorOf = new Map(FLOORS.flatMap((units, i) => units.map((u) => [u, i] as const)));

/**
 * The circles of a graph given as [from, to] edges: one per strongly connected component that holds
 * more than one file or a file importing itself, written as one cycle through it ("a → b → a").
 * Tarjan's algorithm, iterative over the sorted files so the answer is the same every run.
 */
function circles(pairs: [string, string][]): string[] {
  const next = new Map<string, string[]>();
  for (const [a, b] of pairs) {
    if (!next.has(a)) next.set(a, []);
    if (!next.has(b)) next.set(b, []);
    next.get(a)!.push(b);
  }
  for (const list of next.values()) list.sort();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of [...next.keys()].sort()) {
    if (index.has(root)) continue;
    const work: [string, number][] = [[root, 0]];
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      if (i === 0 && !index.has(v)) {
        index.set(v, counter);
        low.set(v, counter++);
        stack.push(v);
        onStack.add(v);
      }
      const out = next.get(v)!;
      if (i < out.length) {
        frame[1]++;
        const w = out[i];
        if (!index.has(w)) work.push([w, 0]);
        else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1 || next.get(v)!.includes(v)) components.push(component.sort());
      }
    }
  }
  // A cycle through each component: from its first file, the shortest way back (breadth first inside it).
  return components
    .map((component) => {
      const inside = new Set(component);
      const start = component[0];
      const from = new Map<string, string>();
      const queue = [start];
      let found: string | null = null;
      while (queue.length > 0 && found === null) {
        const v = queue.shift()!;
        for (const w of next.get(v)!) {
          if (!inside.has(w)) continue;
          if (w === start) {
            found = v;
            break;
          }
          if (!from.has(w)) {
            from.set(w, v);
            queue.push(w);
          }
        }
      }
      const path = [start];
      for (let v = found!; v !== start; v = from.get(v)!) path.splice(1, 0, v);
      return [...path, start].join(" → ");
    })
    .sort();
}

describe("the layout of src/", () => {
  it("parses the imports it checks (a broken pattern fails here, not silently)", () => {
    expect(unresolved).toEqual([]);
    expect(miscounted).toEqual([]);
    expect(edges.length).toBeGreaterThan(900);
    expect(edges.some((e) => e.from === "logs/write.ts" && e.to === "db/batch.ts")).toBe(true);
    expect(edges.some((e) => e.typeOnly)).toBe(true);
  });

  it("places every unit on a floor", () => {
    const units = new Set(files.map(unitOf));
    expect([...units].filter((u) => !floorOf.has(u))).toEqual([]);
  });

  it("imports only from a lower floor or within the unit (type-only imports included)", () => {
    const bad: string[] = [];
    for (const e of edges) {
      const [a, b] = [unitOf(e.from), unitOf(e.to)];
      if (a === b) continue;
      const [fa, fb] = [floorOf.get(a)!, floorOf.get(b)!];
      if (fb < fa) continue;
      bad.push(`src/${e.from}:${e.line} → ${e.spec} (${b}, floor ${fb} ≥ ${a}, floor ${fa})`);
    }
    expect(bad).toEqual([]);
  });

  it("enters prompts/, logs/, sheets/, traces/ and every services domain through its index", () => {
    const bad: string[] = [];
    for (const e of edges) {
      const [a, b] = [unitOf(e.from), unitOf(e.to)];
      if (a === b || !FACES(b) || e.to === `${b}/index.ts` || PAST_FACES.has(`${e.from} → ${e.to}`)) continue;
      bad.push(`src/${e.from}:${e.line} → ${e.spec} (enter ${b} through ${b}/index.ts)`);
    }
    expect(bad).toEqual([]);
  });

  it("has no circle between files, type-only imports included (each file's imports form a tree below it)", () => {
    expect(circles(edges.map((e) => [e.from, e.to]))).toEqual([]);
  });

  it("finds a circle where there is one (the check itself)", () => {
    expect(circles([["a.ts", "b.ts"], ["b.ts", "c.ts"], ["c.ts", "a.ts"], ["c.ts", "d.ts"], ["d.ts", "d.ts"]])).toEqual(["a.ts → b.ts → c.ts → a.ts", "d.ts → d.ts"]);
    expect(circles([["a.ts", "b.ts"], ["a.ts", "c.ts"], ["b.ts", "c.ts"]])).toEqual([]);
  });

  it("keeps no file directly in src/services/ (each lives in its domain's folder)", () => {
    expect(files.filter((f) => /^services\/[^/]+\.ts$/.test(f))).toEqual([]);
  });

  it(`keeps every file of src/ within ${MAX_LINES} lines`, () => {
    const long = files.filter((f) => lineCount(sources.get(f)!) > MAX_LINES);
    expect(long.map((f) => `src/${f}: ${lineCount(sources.get(f)!)} lines`)).toEqual([]);
  });

  it("loads no workerd-only module (cloudflare:*) behind app.ts", () => {
    const seen = new Set<string>();
    const reached: string[] = [];
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const x of externals) if (x.from === file && !x.typeOnly && x.spec.startsWith("cloudflare:")) reached.push(`src/${file}:${x.line} ${x.spec}`);
      for (const e of edges) if (e.from === file && !e.typeOnly) walk(e.to);
    };
    walk("app.ts");
    expect(seen.size).toBeGreaterThan(100);
    expect(reached).toEqual([]);
  });
});
