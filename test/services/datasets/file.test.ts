// The dataset file reader on its own: line numbers and rows whatever the chunking of the stored file
// (slices, a CSV of several parses, a JSON file longer than the lines it remembers).
import { describe, expect, it } from "vitest";
import { DatasetFileError, readDatasetFile } from "../../../src/services/datasets/file";

/** A stored object whose body arrives in reads of `size` bytes. */
function stored(text: string, size: number): R2ObjectBody {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
  return { body, size: bytes.length } as unknown as R2ObjectBody;
}

async function read(text: string, format: "csv" | "json", size: number) {
  const rows: { values: unknown; line: number }[] = [];
  const found = await readDatasetFile(stored(text, size), format, (values, line) => rows.push({ values: JSON.parse(values), line }));
  return { ...found, rows };
}

async function failure(text: string, format: "csv" | "json", size: number): Promise<DatasetFileError> {
  try {
    await read(text, format, size);
  } catch (err) {
    if (err instanceof DatasetFileError) return err;
    throw err;
  }
  throw new Error("the file was read without an error");
}

describe("readDatasetFile", () => {
  it("CSV: rows and their lines, whatever the reads; multi-byte characters cut by a read come through whole", async () => {
    const text = 'q,a\n"two\nlines",é中😀\n\nshort\n';
    for (const size of [1, 2, 3, 1 << 20]) {
      const got = await read(text, "csv", size);
      expect(got.columns).toEqual(["q", "a"]);
      expect(got.rows).toEqual([
        { values: { q: "two\nlines", a: "é中😀" }, line: 2 },
        { values: { q: "short" }, line: 5 },
      ]);
    }
  });

  it("JSON: rows and their lines, whatever the reads; an error names the line of what broke", async () => {
    const text = JSON.stringify([{ a: 1 }, { b: "é中😀" }], null, 2);
    for (const size of [1, 3, 1 << 20]) {
      const got = await read(text, "json", size);
      expect(got.columns).toEqual(["a", "b"]);
      expect(got.rows.map((r) => r.line)).toEqual([2, 5]);
      expect((await failure(`${text.slice(0, -2)},\n  "x"\n]`, "json", size)).message).toBe("line 8: element 2 of the array is a string, not an object");
      expect((await failure(`${text.slice(0, -2)}\n  {}\n]`, "json", size)).message).toBe("line 8: not valid JSON (expected ',' or ']')");
    }
  });

  it("JSON: the line of an error after more text than the reader remembers (several MB of rows)", async () => {
    const row = JSON.stringify({ text: "y".repeat(200) });
    const lines = Array.from({ length: 30_000 }, () => row);
    const text = `[\n${lines.join(",\n")},\n{"text": 1,}\n]`;
    expect(text.length).toBeGreaterThan(6_000_000);
    const err = await failure(text, "json", 64 * 1024);
    expect(err.message).toBe("line 30002: not valid JSON (invalid JSON value)");
    const ok = await read(`[\n${lines.join(",\n")}\n]`, "json", 64 * 1024);
    expect(ok.rows).toHaveLength(30_000);
    expect(ok.rows[29_999].line).toBe(30_001);
  });

  it("stops when afterSlice says so", async () => {
    const text = `a\n${Array.from({ length: 100_000 }, (_, i) => i).join("\n")}\n`;
    let slices = 0;
    const rows: string[] = [];
    await readDatasetFile(stored(text, 300 * 1024), "csv", (v) => rows.push(v), async () => ++slices < 2);
    expect(slices).toBe(2);
    expect(rows.length).toBeLessThan(100_000);
  });
});
