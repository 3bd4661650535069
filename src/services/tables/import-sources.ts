// Sheet imports' sources: the rows an import reads, from a stored CSV or JSON file (streamed through
// the row readers, a slice at a time) or from request logs (a filter, or an into-sheet query), turned
// into batches of positional cells (RowBatcher). A problem with the content is an ImportContentError.
import type { FilterGroup } from "../../filters";
import { CsvError, CsvRowStream } from "../../lib/csv-stream";
import { JsonStreamError, JsonStreamReader } from "../../lib/json-stream";
import { MAX_COLUMNS } from "../../sheets";
import { logsInOrder, matchingLogIds, matchingLogPages, type FillParams, type WorkspaceLogs } from "../../logs";
import type { ImportFormat } from "../../lib/file-format";

/** A sheet holds at most MAX_COLUMNS columns, however they are made. */
export const MAX_IMPORT_COLUMNS = MAX_COLUMNS;

/** A problem with the file's content: the import fails with this message (no retry can help). */
export class ImportContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportContentError";
  }
}

/** The request-log fields an import makes columns of, in the order an import without include_fields makes them. */
export const LOG_FIELDS = [
  "request_id",
  "prompt_name",
  "prompt_id",
  "prompt_version_number",
  "provider",
  "model",
  "input",
  "output",
  "input_tokens",
  "output_tokens",
  "price",
  "latency_ms",
  "status",
  "tags",
  "metadata",
  "request_start_time",
] as const;
export type LogField = (typeof LOG_FIELDS)[number];

export type Cell = string | null | [string, string];

function jsonCell(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  const j = JSON.stringify(v);
  return [typeof v === "object" ? j : String(v), j];
}

/** Turns a file's rows into batches of positional cells, tracking the import's columns. */
export class RowBatcher {
  readonly columns: string[] = [];
  private readonly positions = new Map<string, number>();
  rows: Cell[][] = [];
  /** Characters of each buffered row, so a batch can be cut by size as well as by count. */
  private rowChars: number[] = [];
  chars = 0;
  /** Data rows read from the file so far (skipped ones included). */
  seen = 0;

  constructor(private readonly skip: number) {}

  private column(title: string): number {
    let pos = this.positions.get(title);
    if (pos === undefined) {
      pos = this.columns.length;
      if (pos >= MAX_IMPORT_COLUMNS) throw new ImportContentError(`the file has more than ${MAX_IMPORT_COLUMNS} columns`);
      this.columns.push(title);
      this.positions.set(title, pos);
    }
    return pos;
  }

  header(fields: string[]): void {
    if (fields.length > MAX_IMPORT_COLUMNS) throw new ImportContentError(`the file has more than ${MAX_IMPORT_COLUMNS} columns`);
    // Positional: duplicate or empty header names still get their own column.
    for (const f of fields) this.columns.push(f);
  }

  csvRow(fields: string[]): void {
    if (this.seen++ < this.skip) return this.extend(fields.length);
    this.extend(fields.length);
    const row: Cell[] = new Array(fields.length);
    let chars = 0;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      row[i] = f === "" ? null : f;
      chars += f.length;
    }
    this.push(row, chars);
  }

  /** A CSV row longer than the header adds untitled columns. */
  private extend(n: number): void {
    if (n > MAX_IMPORT_COLUMNS) throw new ImportContentError(`the file has more than ${MAX_IMPORT_COLUMNS} columns`);
    while (this.columns.length < n) this.columns.push("");
  }

  jsonRow(obj: Record<string, unknown>): void {
    const skipped = this.seen++ < this.skip;
    const row: Cell[] = [];
    let chars = 0;
    for (const key of Object.keys(obj)) {
      const pos = this.column(key);
      if (skipped) continue;
      const cell = jsonCell(obj[key]);
      row[pos] = cell;
      if (cell !== null) chars += typeof cell === "string" ? cell.length : cell[1].length;
    }
    if (skipped) return;
    for (let i = 0; i < row.length; i++) if (row[i] === undefined) row[i] = null;
    this.push(row, chars);
  }

  private push(row: Cell[], chars: number): void {
    this.rows.push(row);
    this.rowChars.push(chars);
    this.chars += chars;
  }

  /** The next batch: buffered rows up to maxRows and maxChars (at least one row); the rest stay. */
  take(maxRows: number, maxChars: number): Cell[][] {
    let n = 0;
    let chars = 0;
    while (n < this.rows.length && n < maxRows && (n === 0 || chars + this.rowChars[n] <= maxChars)) chars += this.rowChars[n++];
    const batch = this.rows.slice(0, n);
    this.rows = this.rows.slice(n);
    this.rowChars = this.rowChars.slice(n);
    this.chars -= chars;
    return batch;
  }
}

function rowReader(format: ImportFormat, batcher: RowBatcher) {
  if (format === "csv") {
    let headerSeen = false;
    const csv = new CsvRowStream((fields) => {
      if (!headerSeen) {
        headerSeen = true;
        batcher.header(fields);
      } else batcher.csvRow(fields);
    });
    return {
      write: (t: string) => csv.write(t),
      end: () => {
        csv.end();
        if (!headerSeen) throw new ImportContentError("the file is empty: a CSV import needs a header row");
      },
    };
  }
  const json = new JsonStreamReader({
    descend: (path) => path.length === 0,
    onContainerStart: (path, kind) => {
      if (path.length === 0 && kind !== "array") throw new ImportContentError("a JSON import must be an array of objects; the file holds an object");
    },
    onValue: (path, value) => {
      if (path.length === 0) throw new ImportContentError("a JSON import must be an array of objects");
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw new ImportContentError(`a JSON import must be an array of objects; element ${path[0]} is ${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`}`);
      }
      batcher.jsonRow(value as Record<string, unknown>);
    },
  });
  return {
    write: (t: string) => json.write(t),
    end: () => {
      try {
        json.end();
      } catch (err) {
        if (err instanceof JsonStreamError && err.reason === "no JSON value") throw new ImportContentError("the file is empty");
        throw err;
      }
    },
  };
}

export function contentMessage(err: unknown, format: ImportFormat): string | null {
  if (err instanceof ImportContentError) return err.message;
  if (err instanceof CsvError) return `not a valid CSV file: ${err.message}`;
  if (err instanceof JsonStreamError) return `not a valid JSON file: ${err.message}`;
  if (err instanceof TypeError && /decode|UTF-8|encoded data/i.test(err.message)) {
    return `the file is not UTF-8 text (a ${format.toUpperCase()} import needs UTF-8)`;
  }
  return null;
}

/** Reads the logs an import's filter matches, in id order, a page at a time. */
const LOG_PAGE = 100;

interface LogRow {
  id: number;
  prompt_name: string | null;
  prompt_id: number | null;
  prompt_version_number: number | null;
  provider: string;
  model: string;
  input_text: string;
  output_text: string;
  prompt_input_variables: string;
  input_tokens: number;
  output_tokens: number;
  price: number;
  status: string;
  tags: string;
  metadata: string;
  request_start_time: number;
  request_end_time: number;
  [k: string]: unknown;
}

/** One sheet row per log: its input variables first (the inputs computed columns read), then its fields. */
function logRecord(r: LogRow): Record<string, unknown> {
  const vars = JSON.parse(r.prompt_input_variables) as Record<string, unknown>;
  return { ...vars, ...logFields(r) };
}

/** A log's fields as an import stores them (LOG_FIELDS, in that order). */
function logFields(r: LogRow): Record<LogField, unknown> {
  return {
    request_id: r.id,
    prompt_name: r.prompt_name,
    prompt_id: r.prompt_id,
    prompt_version_number: r.prompt_version_number,
    provider: r.provider,
    model: r.model,
    input: r.input_text,
    output: r.output_text,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    price: r.price,
    latency_ms: r.request_end_time - r.request_start_time,
    status: r.status,
    tags: JSON.parse(r.tags) as unknown,
    metadata: JSON.parse(r.metadata) as unknown,
    request_start_time: new Date(r.request_start_time).toISOString(),
  };
}

/**
 * One sheet row per log with the columns an import into an existing sheet asked for: the named input
 * variables (null where a log lacks one) or all of them, then the named fields or all of them.
 */
function pickedLogRecord(r: LogRow, variables: string[] | null, fields: readonly LogField[] | null): Record<string, unknown> {
  const vars = JSON.parse(r.prompt_input_variables) as Record<string, unknown>;
  // No prototype: a variable named "__proto__" is a column like any other.
  const out: Record<string, unknown> = Object.create(null);
  if (variables === null) Object.assign(out, vars);
  else for (const name of variables) out[name] = Object.hasOwn(vars, name) ? vars[name] : null;
  const f = logFields(r);
  for (const name of fields ?? LOG_FIELDS) out[name] = f[name];
  return out;
}

export interface RowSource {
  /** Feeds every row of the import to the batcher, calling drain() whenever it may have a batch. */
  run(batcher: RowBatcher, drain: () => Promise<void>, progress: (fraction: number) => void): Promise<void>;
}

/** Bytes of the file parsed between two drains of the batcher. */
const PARSE_SLICE_BYTES = 256 * 1024;

export function fileSource(object: R2ObjectBody, format: ImportFormat): RowSource {
  return {
    async run(batcher, drain, progress) {
      const reader = rowReader(format, batcher);
      const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
      const r = object.body.getReader();
      let bytesRead = 0;
      let ended = false;
      try {
        for (;;) {
          const { done, value } = await r.read();
          if (done) break;
          // An R2 read can hand over megabytes at once (a whole multipart part): parsed in one go, all
          // its rows would sit in the batcher together. Slices keep what is buffered to one slice's rows.
          for (let at = 0; at < value.byteLength; at += PARSE_SLICE_BYTES) {
            const slice = value.subarray(at, Math.min(value.byteLength, at + PARSE_SLICE_BYTES));
            bytesRead += slice.byteLength;
            progress(bytesRead / Math.max(1, object.size));
            reader.write(text.decode(slice, { stream: true }));
            await drain();
          }
        }
        ended = true;
      } finally {
        // A run that stops part-way (its slice used up, a content error) lets go of the rest of the object.
        if (!ended) await r.cancel().catch(() => {});
      }
      reader.write(text.decode());
      reader.end();
    },
  };
}

/** `logs`: the workspace's log database. */
export function requestLogSource(logs: WorkspaceLogs, workspaceId: number, filter: FilterGroup): RowSource {
  const pages = matchingLogPages<LogRow>(logs, workspaceId, filter, LOG_PAGE);
  return {
    async run(batcher, drain, progress) {
      const total = await pages.count();
      let done = 0;
      for await (const page of pages.pages()) {
        // Drained row by row: a log can be a megabyte, so a page never piles up in memory.
        for (const row of page) {
          batcher.jsonRow(logRecord(row));
          progress(++done / Math.max(1, total));
          await drain();
        }
      }
    },
  };
}

/** The logs an import into an existing sheet asked for, in its order (at most MAX_IMPORT_LOGS), from the workspace's log database. */
export function logQuerySource(logs: WorkspaceLogs, workspaceId: number, query: FillParams, variables: string[] | null, fields: readonly LogField[] | null): RowSource {
  return {
    async run(batcher, drain, progress) {
      const ids = await matchingLogIds(logs, workspaceId, query);
      let done = 0;
      for await (const page of logsInOrder<LogRow>(logs, workspaceId, ids, query.max_log_id ?? 0, LOG_PAGE)) {
        for (const row of page) {
          batcher.jsonRow(pickedLogRecord(row, variables, fields));
          progress(++done / Math.max(1, ids.length));
          await drain();
        }
      }
    },
  };
}
