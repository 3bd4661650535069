// CSV rows from text that arrives in chunks, through papaparse's core parser: quoted fields with
// embedded delimiters, quotes and newlines, CRLF or LF or CR line ends, a leading BOM. Only the
// unfinished last row of a chunk is carried over, so memory is one chunk plus one row.
import Papa from "papaparse";

export class CsvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CsvError";
  }
}

interface CoreParser {
  parse(input: string, baseIndex: number, ignoreLastRow: boolean): Papa.ParseResult<string[]>;
}
type CoreParserClass = new (config: Papa.ParseConfig) => CoreParser;
const Parser = (Papa as unknown as { Parser: CoreParserClass }).Parser;

/** Text is parsed once this much has gathered (fewer, larger parser calls). */
const PARSE_CHARS = 1 << 20;
/** A row still unfinished after this many characters is not CSV (an unclosed quote, most likely). */
const MAX_ROW_CHARS = 16 * 1024 * 1024;

/** papaparse's rule: \r\n when most \r are followed by \n; \n when it comes first or alone. */
function guessNewline(sample: string): "\n" | "\r\n" | "\r" {
  const s = sample.replace(/"[^"]*"/g, "");
  const r = s.split("\r");
  const n = s.split("\n");
  if (r.length === 1 || (n.length > 1 && n[0].length < r[0].length)) return "\n";
  let withN = 0;
  for (let i = 1; i < r.length; i++) if (r[i][0] === "\n") withN++;
  return withN >= (r.length - 1) / 2 ? "\r\n" : "\r";
}

/** Line breaks inside a row's fields (a quoted field may hold some): \r\n, \n or \r, as editors count them. */
function breaksIn(fields: string[]): number {
  let n = 0;
  for (const f of fields) {
    if (f.indexOf("\n") === -1 && f.indexOf("\r") === -1) continue;
    const m = f.match(/\r\n|\r|\n/g);
    if (m) n += m.length;
  }
  return n;
}

export class CsvRowStream {
  private buf = "";
  private partial = "";
  private parser: CoreParser | null = null;
  private first = true;
  /** Rows emitted so far (the header included). */
  rows = 0;
  /** The 1-based line of the file the next row starts on. */
  private line = 1;

  /** onRow gets each row's fields and the 1-based line of the file the row starts on. */
  constructor(private readonly onRow: (fields: string[], line: number) => void) {}

  write(text: string): void {
    this.buf += text;
    if (this.buf.length >= PARSE_CHARS) this.parse(false);
  }

  end(): void {
    this.parse(true);
  }

  private setup(sample: string): CoreParser {
    const newline = guessNewline(sample.slice(0, 1 << 20));
    const guess = Papa.parse<string[]>(sample.slice(0, 64 * 1024), {
      preview: 20,
      newline,
      skipEmptyLines: true,
      delimitersToGuess: [",", "\t", ";", "|"],
    });
    const delimiter = guess.meta.delimiter || ",";
    return new Parser({ delimiter, newline, quoteChar: '"' });
  }

  private parse(final: boolean): void {
    let input = this.partial + this.buf;
    this.buf = "";
    this.partial = "";
    if (this.first) {
      if (input.length === 0 && !final) return;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
      if (input.indexOf("\u0000") !== -1) throw new CsvError("the file holds binary data (NUL bytes), not CSV text");
      this.first = false;
      this.parser = this.setup(input);
    }
    if (input.length === 0) return;
    const res = this.parser!.parse(input, 0, !final);
    if (final) {
      const unclosed = res.errors.find((e) => e.code === "MissingQuotes");
      if (unclosed) {
        let line = this.line;
        for (let i = 0; i < (unclosed.row ?? 0) && i < res.data.length; i++) line += 1 + breaksIn(res.data[i]);
        throw new CsvError(`unclosed quoted field starting on line ${line}`);
      }
    }
    for (const row of res.data) {
      const line = this.line;
      this.line += 1 + breaksIn(row);
      // A blank line (one empty or all-space field) is no row.
      if (row.length === 1 && row[0].trim() === "") continue;
      this.rows++;
      this.onRow(row, line);
    }
    if (!final) {
      this.partial = input.slice(res.meta.cursor);
      if (this.partial.length > MAX_ROW_CHARS) throw new CsvError(`the row starting on line ${this.line} is longer than ${MAX_ROW_CHARS} characters (an unclosed quote?)`);
    }
  }
}
