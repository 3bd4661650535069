// One spelling of SQL: a table's name appears in SQL text only through the drizzle schema (`${table}` in a
// `sql` template, `tableName(table)` in SQL built as text), so renaming a table in src/db/schema is caught
// by the compiler instead of by a query failing in production. This test greps src/ for the bare names.
// Column names are converted alongside, but a grep cannot tell a column from prose, so it checks tables only.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(root + path, "utf8");
const filesUnder = (dir: string, ext: string) =>
  readdirSync(root + dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(ext))
    .map((f) => `${dir}/${f.replaceAll("\\", "/")}`)
    .sort();

/** Every D1 table: drizzle's `sqliteTable("name"`, plus the virtual tables the migrations create (the FTS5 index). */
function tableNames(): string[] {
  const names = new Set<string>();
  for (const file of filesUnder("src/db/schema", ".ts")) {
    for (const [, name] of read(file).matchAll(/sqliteTable\(\s*"([a-z0-9_]+)"/g)) names.add(name);
  }
  for (const dir of readdirSync(root).filter((d) => d.startsWith("migrations"))) {
    for (const file of filesUnder(dir, ".sql")) {
      for (const [, name] of read(file).matchAll(/CREATE VIRTUAL TABLE\s+(?:IF NOT EXISTS\s+)?[`"]?([a-z0-9_]+)/gi)) names.add(name);
    }
  }
  return [...names].sort();
}

/** `src/path:line table` for each line of src/ that names a table bare in SQL (comment lines skipped). */
function bareNames(names: string[]): string[] {
  const alt = names.join("|");
  // After a keyword that names a table, quoted and qualified ("t".col), or opening a template as a FROM clause (`t AS x`).
  const pattern = new RegExp(`\\b(?:from|join|into|update|table)\\s+(${alt})\\b|"(${alt})"\\s*\\.|\`(${alt})\\s+as\\s`, "gi");
  const hits: string[] = [];
  for (const file of filesUnder("src", ".ts")) {
    if (file.startsWith("src/db/schema/")) continue; // where the names are defined
    read(file)
      .split("\n")
      .forEach((line, i) => {
        const start = line.trimStart();
        if (start.startsWith("//") || start.startsWith("*") || start.startsWith("/*")) return;
        for (const m of line.matchAll(pattern)) hits.push(`${file}:${i + 1} ${(m[1] ?? m[2] ?? m[3]).toLowerCase()}`);
      });
  }
  return hits;
}

describe("table names in SQL", () => {
  const names = tableNames();

  it("finds every table of the schema and the migrations", () => {
    expect(names.length).toBeGreaterThan(40);
    expect(names).toContain("request_logs");
    expect(names).toContain("request_logs_fts");
  });

  it("come from the drizzle schema, never as bare words", () => {
    expect(bareNames(names), "bare table names in SQL: use ${table} in a sql template, getTableName(table) in SQL built as text").toEqual([]);
  });
});
