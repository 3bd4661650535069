// A file larger than one parse slice (256 KiB) is parsed slice by slice: characters of several bytes
// and quoted fields cut by a slice boundary come through whole, and every row arrives once, in order.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { CellView, RowView } from "../../../src/sheets/types";
import { createWorkspace, type TestKey } from "../../helpers/api";
import { importAndWait, newTable } from "../../helpers/tables";

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});

describe("file import parsed in slices", () => {
  it("keeps multi-byte characters and quoted fields across slice boundaries", { timeout: 60_000 }, async () => {
    // Long rows (about 1.5 KB) of multi-byte characters (2, 3 and 4 bytes, varying counts) in a quoted
    // field with a comma and a newline: a file of two slices and a half, cut mid-row.
    const value = (i: number) => `r${i} ${"é中😀".repeat(100 + (i % 13))}`;
    const lines = ["id,text,note"];
    let bytes = 0;
    for (let i = 0; bytes < 2.5 * 256 * 1024; i++) {
      lines.push(`${i},"${value(i)}, ""q""\nline2",n${i}`);
      bytes += new TextEncoder().encode(lines[lines.length - 1]).byteLength + 1;
    }
    const expected = lines.length - 1;
    const t = await newTable(ws);
    const { op, sheetId } = await importAndWait(ws, t.id, "slices.csv", `${lines.join("\n")}\n`);
    expect(op).toMatchObject({ status: "completed", rows_added: expected });
    const sheet = env.SHEETS.get(env.SHEETS.idFromName(sheetId));
    const cols = await sheet.listColumns();
    let after: number | null = null;
    let n = 0;
    for (;;) {
      const page = await sheet.readRows({ after, limit: 1000 });
      for (const r of page.rows as RowView[]) {
        const [id, text, note] = cols.map((c) => (r.cells[c.id] as CellView).display_value);
        expect(id).toBe(String(n));
        expect(text).toBe(`${value(n)}, "q"\nline2`);
        expect(note).toBe(`n${n}`);
        n++;
      }
      if (!page.hasMore) break;
      after = page.rows[page.rows.length - 1].row_index;
    }
    expect(n).toBe(expected);
  });
});
