import { describe, expect, it } from "vitest";
import { Base64Error, Base64StreamDecoder } from "../../src/lib/base64-stream";
import { CsvError, CsvRowStream } from "../../src/lib/csv-stream";
import { decodeCursor, encodeCursor } from "../../src/lib/cursor";
import { JsonStreamError, JsonStreamReader, type JsonPath } from "../../src/lib/json-stream";
import { cellId, parseCellId } from "../../src/sheets/cell-id";
import { promptRefsOf } from "../../src/sheets/prompt-refs";

/** Feeds text in pieces of `size` characters. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function readArray(text: string, size: number): unknown[] {
  const values: unknown[] = [];
  const r = new JsonStreamReader({ descend: (p) => p.length === 0, onValue: (_p, v) => values.push(v) });
  for (const p of pieces(text, size)) r.write(p);
  r.end();
  return values;
}

describe("JsonStreamReader", () => {
  const doc = [{ a: 1, b: "x,\"y\"\n\\z \u00e9 \ud83d\ude00" }, { nested: { k: [1, 2, { q: null }] } }, { t: true, f: false, n: -1.5e3 }];
  const text = JSON.stringify(doc, null, 2);

  it("emits each array element whole, whatever the chunking", () => {
    for (const size of [1, 2, 3, 7, 64, 100000]) expect(readArray(text, size)).toEqual(doc);
  });

  it("streams a chosen string in decoded pieces and captures the rest", () => {
    const body = JSON.stringify({ title: "T", source: { type: "file", file_content_base64: "QUJD\\/\"é\u0001", file_name: "a.csv" }, index: 2 });
    for (const size of [1, 5, 1000]) {
      let streamed = "";
      const seen: [JsonPath, unknown][] = [];
      const r = new JsonStreamReader({
        descend: (p) => p.length === 0 || (p.length === 1 && p[0] === "source"),
        streamString: (p) => p.join(".") === "source.file_content_base64",
        onValue: (p, v) => seen.push([p, v]),
        onStringChunk: (_p, c) => (streamed += c),
      });
      for (const p of pieces(body, size)) r.write(p);
      r.end();
      expect(streamed).toBe("QUJD\\/\"é\u0001");
      // Counted as written: an escape takes its raw length (two characters, or six for a \\u escape).
      expect(r.streamedChars).toBe(JSON.stringify("QUJD\\/\"é\u0001").length - 2);
      expect(seen).toEqual([
        [["title"], "T"],
        [["source", "type"], "file"],
        [["source", "file_name"], "a.csv"],
        [["index"], 2],
      ]);
    }
  });

  it("reports malformed JSON with its position", () => {
    for (const bad of ["[1,]", "[1 2]", '{"a" 1}', "[1", "", "[1] x", "[tru]", '{"a":1,}']) {
      expect(() => readArray(bad, 2), bad).toThrow(JsonStreamError);
    }
  });

  it("caps the size of a captured value", () => {
    const r = new JsonStreamReader({ descend: (p) => p.length === 0, onValue: () => undefined }, 10);
    expect(() => r.write(`["${"x".repeat(20)}"]`)).toThrow(/larger than 10/);
  });
});

describe("Base64StreamDecoder", () => {
  const bytes = new Uint8Array(1000).map((_, i) => (i * 7) % 256);
  const b64 = btoa(String.fromCharCode(...bytes));

  it("decodes any split of the text, with whitespace and the URL-safe alphabet", () => {
    for (const size of [1, 3, 4, 5, 77, 5000]) {
      const d = new Base64StreamDecoder();
      const out: number[] = [];
      for (const p of pieces(b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/(.{76})/g, "$1\r\n"), size)) out.push(...d.push(p));
      out.push(...d.end());
      expect(new Uint8Array(out)).toEqual(bytes);
    }
  });

  it("accepts missing padding and refuses bad characters, data after padding and a dangling character", () => {
    const d = new Base64StreamDecoder();
    expect([...d.push("QUI"), ...d.end()]).toEqual([65, 66]);
    expect(() => new Base64StreamDecoder().push("QU!D")).toThrow(Base64Error);
    expect(() => new Base64StreamDecoder().push("QQ==QUJD")).toThrow(/after its '=' padding/);
    const e = new Base64StreamDecoder();
    e.push("QUJDR");
    expect(() => e.end()).toThrow(/truncated/);
  });
});

describe("CsvRowStream", () => {
  function rows(text: string, size: number) {
    const out: string[][] = [];
    const s = new CsvRowStream((r) => out.push(r));
    for (const p of pieces(text, size)) s.write(p);
    s.end();
    return out;
  }
  const awkward = '\ufeffname,note\r\n"Smith, J","said ""hi""\r\nthen left"\r\n\r\nplain,\r\n';
  it("parses quotes, embedded commas, quotes and newlines, BOM and CRLF, skipping blank lines", () => {
    for (const size of [1, 2, 5, 1 << 21]) {
      expect(rows(awkward, size)).toEqual([["name", "note"], ["Smith, J", 'said "hi"\r\nthen left'], ["plain", ""]]);
    }
  });
  it("guesses semicolons and tabs, and reads LF and CR line ends", () => {
    expect(rows("a;b\n1;2\n", 3)).toEqual([["a", "b"], ["1", "2"]]);
    expect(rows("a\tb\r1\t2", 3)).toEqual([["a", "b"], ["1", "2"]]);
  });
  it("refuses an unclosed quote and binary data", () => {
    expect(() => rows('a,b\n"open,1\n', 4)).toThrow(CsvError);
    expect(() => rows("a\u0000b", 4)).toThrow(/binary/);
  });
  it("gives each row the line it starts on: blank lines and line breaks inside quoted fields count, across parses", () => {
    const lines = (text: string, size: number) => {
      const out: number[] = [];
      const s = new CsvRowStream((_r, line) => out.push(line));
      for (const p of pieces(text, size)) s.write(p);
      s.end();
      return out;
    };
    for (const size of [1, 5, 1 << 21]) expect(lines(awkward, size)).toEqual([1, 2, 5]);
    expect(lines('a\r"b\rc"\rd', 3)).toEqual([1, 2, 4]);
    // More than one parse (1 MiB each): rows of 2 lines, then a row after them.
    const many = Array.from({ length: 40_000 }, (_, i) => `${i},"x\ny"`).join("\n");
    const got = lines(`${many}\nlast,1\n`, 64 * 1024);
    expect(got).toHaveLength(40_001);
    expect(got[39_999]).toBe(79_999);
    expect(got[40_000]).toBe(80_001);
    expect(() => lines(`${many}\n"open,1\n`, 64 * 1024)).toThrow(/unclosed quoted field starting on line 80001$/);
  });
});

describe("cursors", () => {
  it("round-trip and refuse anything else", () => {
    const c = encodeCursor({ o: "desc", k: 42 });
    expect(decodeCursor(c, "desc")).toEqual({ o: "desc", k: 42 });
    expect(() => decodeCursor(c, "asc")).toThrow(/order=desc/);
    for (const bad of ["", "!!", "abc", btoa("[1]"), btoa('{"o":"desc","k":-1}'), btoa('{"o":"up","k":1}'), "x".repeat(300)]) {
      expect(() => decodeCursor(bad, "desc"), bad).toThrow(/cursor/);
    }
  });

  it("carry a fractional key, a text tie-breaker and a filter fingerprint only where the list allows them", () => {
    const c = encodeCursor({ o: "asc", k: 1_780_000_000_123.4567, s: "0af3", f: "abcd" });
    expect(decodeCursor(c, "asc", { fractional: true, filter: "abcd" })).toEqual({ o: "asc", k: 1_780_000_000_123.4567, s: "0af3", f: "abcd" });
    expect(() => decodeCursor(c, "asc")).toThrow(/not a cursor/);
    expect(() => decodeCursor(c, "asc", { fractional: true, filter: "other" })).toThrow(/other filters/);
    expect(() => decodeCursor(encodeCursor({ o: "asc", k: 1, s: "x".repeat(65) }), "asc", { fractional: true })).toThrow(/not a cursor/);
    expect(() => decodeCursor(btoa('{"o":"asc","k":1,"s":7}'), "asc", { fractional: true })).toThrow(/not a cursor/);
  });
});

describe("cell ids", () => {
  it("are UUIDs unique per (column, row), never the column id, and decode back", () => {
    const col = crypto.randomUUID();
    const ids = new Set<string>();
    for (const row of [0, 1, 2, 255, 2 ** 24, 2 ** 40 + 3]) {
      const id = cellId(col, row);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(id).not.toBe(col);
      ids.add(id);
      const parsed = parseCellId(id.toUpperCase())!;
      expect(col.startsWith(parsed.prefix)).toBe(true);
      expect(parsed.rowIndexFor(col)).toBe(row);
    }
    expect(ids.size).toBe(6);
    expect(parseCellId("not-a-uuid")).toBeNull();
  });
});

describe("promptRefsOf", () => {
  it("finds prompt, version and label ids at the top of a config or under template", () => {
    expect(promptRefsOf("TEXT", { prompt_id: 1 })).toEqual([]);
    expect(promptRefsOf("PROMPT_TEMPLATE", { prompt_id: 3, prompt_version_id: "4" })).toEqual([{ promptId: 3, promptVersionId: 4, promptLabelId: null }]);
    expect(promptRefsOf("PROMPT_TEMPLATE", { template: { prompt_template_id: 9, label_id: 2 } })).toEqual([{ promptId: 9, promptVersionId: null, promptLabelId: 2 }]);
    expect(promptRefsOf("LLM_ASSERTION", { prompt_id: -1, other: 5 })).toEqual([]);
  });
});
