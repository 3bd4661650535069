// The layout of src/ (docs/conventions.md, "Layout of the code"), checked over the import graph: the
// floors (a file imports only a strictly lower floor or its own unit; type-only imports count too),
// the faces (another unit enters prompts/, logs/ or a services domain through its index), no flat
// file in services/, no file over 700 lines, and no workerd-only module behind app.ts (the console's
// type generator loads app.ts in Node). Pure Node: it reads the sources with node:fs, in about a
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
  ["filters", "converters", "blocks", "sandbox"],
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
  ["services/datasets", "services/tables", "services/workflows"],
  ["services/ingest", "services/evaluations"],
  ["queue"],
  ["http"],
  ["routes"],
  ["app.ts"],
  ["index.ts"],
];

/** Units entered only through their index.ts from outside. */
const FACES = (unit: string) => unit === "prompts" || unit === "logs" || unit.startsWith("services/");

/** Files over 700 lines whose split (issue 31) is under way on other branches: each leaves this list when its split lands. */
const LONG_FILES_ALLOWED = new Set<string>([
  "sheets/scorecard.ts",
  "sheets/sheet-object.ts",
  "traces/span-mapping.ts",
]);

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

const IMPORT = /(?:^|[;\s])(import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

function resolve(from: string, spec: string): string | null {
  const base = relative(SRC, join(SRC, dirname(from), spec)).split("\\").join("/");
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base]) if (sources.has(candidate)) return candidate;
  return null;
}

const edges: Edge[] = [];
const unresolved: string[] = [];
for (const [file, text] of sources) {
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[3] ?? m[4];
    const line = text.slice(0, m.index).split("\n").length + (m[0].startsWith("\n") ? 1 : 0);
    const to = resolve(file, spec);
    if (!to) {
      unresolved.push(`src/${file}:${line} ${spec}`);
      continue;
    }
    const names = /\{([^}]*)\}/.exec(m[0])?.[1].split(",").map((n) => n.trim()).filter(Boolean);
    const typeOnly = Boolean(m[2]) || (m[1] === "import" && !!names?.length && names.every((n) => n.startsWith("type ")) && !/import\s+[\w$]+\s*,/.test(m[0]));
    edges.push({ from: file, line, spec, to, typeOnly });
  }
}

/** The unit of a file: services/<domain>, a top-level folder, or the root file itself. */
function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts.length === 1) return parts[0];
  if (parts[0] === "services" && parts.length > 2 && FLOORS.some((f) => f.includes(`services/${parts[1]}`))) return `services/${parts[1]}`;
  return parts[0];
}

const floorOf = new Map(FLOORS.flatMap((units, i) => units.map((u) => [u, i] as const)));

describe("the layout of src/", () => {
  it("parses the imports it checks (a broken pattern fails here, not silently)", () => {
    expect(unresolved).toEqual([]);
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

  it("enters prompts/, logs/ and every services domain through its index", () => {
    const bad: string[] = [];
    for (const e of edges) {
      const [a, b] = [unitOf(e.from), unitOf(e.to)];
      if (a === b || !FACES(b) || e.to === `${b}/index.ts`) continue;
      bad.push(`src/${e.from}:${e.line} → ${e.spec} (enter ${b} through ${b}/index.ts)`);
    }
    expect(bad).toEqual([]);
  });

  it("keeps no file directly in src/services/ (each lives in its domain's folder)", () => {
    expect(files.filter((f) => /^services\/[^/]+\.ts$/.test(f))).toEqual([]);
  });

  it(`keeps every file of src/ within ${MAX_LINES} lines`, () => {
    const long = files.filter((f) => lineCount(sources.get(f)!) > MAX_LINES && !LONG_FILES_ALLOWED.has(f));
    expect(long.map((f) => `src/${f}: ${lineCount(sources.get(f)!)} lines`)).toEqual([]);
  });

  it("loads no workerd-only module (cloudflare:*) behind app.ts", () => {
    const seen = new Set<string>();
    const reached: string[] = [];
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = sources.get(file)!;
      for (const m of text.matchAll(/^import\s+(?!type\b)[^;]*?from\s+["'](cloudflare:[^"']+)["']/gm)) reached.push(`src/${file}: ${m[1]}`);
      for (const e of edges) if (e.from === file && !e.typeOnly) walk(e.to);
    };
    walk("app.ts");
    expect(seen.size).toBeGreaterThan(100);
    expect(reached).toEqual([]);
  });

  it("lists no long file that is no longer long", () => {
    expect([...LONG_FILES_ALLOWED].filter((f) => !sources.has(f) || lineCount(sources.get(f)!) <= MAX_LINES)).toEqual([]);
  });
});
