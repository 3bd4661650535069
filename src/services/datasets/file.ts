// Dataset versions from a file: the one reader of a stored CSV or JSON file, used twice on the same
// bytes: by the request, which reads the whole file before answering (so a bad file is a 400 naming
// its line, and nothing is queued), and by the fill job, which writes the rows it yields into the
// draft (fill.ts). The file streams from R2 in slices and is never held whole; a row is at
// most MAX_ROW_BYTES as JSON, well under D1's 2 MB value.
import type { Db } from "../../db/client";
import type { AuthContext } from "../../env";
import { CsvError, CsvRowStream } from "../../lib/csv-stream";
import { ApiError } from "../../lib/errors";
import { JsonStreamError, JsonStreamReader } from "../../lib/json-stream";
import type { ReceivedFile } from "../../lib/file-upload";
import { queueDraftJob, requireGroup, type FileFillParams } from "./datasets";
import { formatOf, type ImportFormat } from "../../lib/file-format";

/** Columns a file may have (as many as a sheet holds). */
export const MAX_FILE_COLUMNS = 500;
/** Characters of a column name (a CSV header cell, a JSON key). */
export const MAX_COLUMN_NAME_CHARS = 255;
/** UTF-8 bytes of one row's values as JSON. */
export const MAX_ROW_BYTES = 1_000_000;

/** A problem with the file's content; `tooLarge` when it is a row over MAX_ROW_BYTES (a 413). */
export class DatasetFileError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
    this.name = "DatasetFileError";
  }
}

const encoder = new TextEncoder();

/** UTF-8 length of a string, counted only when it could be over `cap` (at most 3 bytes a UTF-16 unit). */
function overBytes(s: string, cap: number): boolean {
  return s.length * 3 > cap && (s.length > cap || encoder.encode(s).length > cap);
}

const rowTooLarge = (line: number) => new DatasetFileError(`line ${line}: the row is larger than ${MAX_ROW_BYTES} bytes as JSON`, true);

/**
 * Maps a character position of the text read so far to its line, for the positions an error can name:
 * the start of the value being read (at most the JSON reader's value cap back) or later. Older text is
 * forgotten, so memory stays at about one row.
 */
class LineTracker {
  private readonly chunks: { start: number; line: number; text: string }[] = [];
  private pos = 0;
  private line = 1;

  constructor(private readonly keepChars: number) {}

  add(text: string): void {
    this.chunks.push({ start: this.pos, line: this.line, text });
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.line++;
    this.pos += text.length;
    while (this.chunks.length > 1 && this.pos - this.chunks[1].start > this.keepChars) this.chunks.shift();
  }

  lineAt(position: number): number {
    for (let i = this.chunks.length - 1; i >= 0; i--) {
      const c = this.chunks[i];
      if (c.start > position) continue;
      let line = c.line;
      const upto = Math.min(position - c.start, c.text.length);
      for (let j = c.text.indexOf("\n"); j !== -1 && j < upto; j = c.text.indexOf("\n", j + 1)) line++;
      return line;
    }
    return this.chunks[0]?.line ?? 1;
  }
}

/** A row as the reader yields it: its values as JSON text and the line it starts on. */
export type RowSink = (valuesJson: string, line: number) => void;

interface TextReader {
  write(text: string): void;
  end(): void;
}

function checkName(name: string, line: number, what: string): void {
  if (name.trim() === "") throw new DatasetFileError(`line ${line}: ${what} has no name`);
  if (name.length > MAX_COLUMN_NAME_CHARS) throw new DatasetFileError(`line ${line}: ${what} has a name longer than ${MAX_COLUMN_NAME_CHARS} characters`);
}

const tooManyColumns = (line: number) => new DatasetFileError(`line ${line}: the file has more than ${MAX_FILE_COLUMNS} columns`);

/**
 * CSV: the first row is the header, naming the columns (each named, unique, at most 500). A row may
 * have fewer fields than the header (the missing ones are null); more is an error. Cells are text.
 */
function csvReader(columns: string[], onRow: RowSink): TextReader {
  let header: string[] | null = null;
  const csv = new CsvRowStream((fields, line) => {
    if (!header) {
      if (fields.length > MAX_FILE_COLUMNS) throw tooManyColumns(line);
      const seen = new Map<string, number>();
      fields.forEach((name, i) => {
        checkName(name, line, `column ${i + 1} of the header`);
        const before = seen.get(name);
        if (before !== undefined) throw new DatasetFileError(`line ${line}: the header names column ${JSON.stringify(name)} twice (columns ${before + 1} and ${i + 1})`);
        seen.set(name, i);
      });
      header = fields;
      columns.push(...fields);
      return;
    }
    if (fields.length > header.length) throw new DatasetFileError(`line ${line}: ${fields.length} fields, but the header has ${header.length}`);
    const values: Record<string, string> = {};
    for (let i = 0; i < fields.length; i++) values[header[i]] = fields[i];
    const json = JSON.stringify(values);
    if (overBytes(json, MAX_ROW_BYTES)) throw rowTooLarge(line);
    onRow(json, line);
  });
  return {
    write: (t) => csv.write(t),
    end: () => csv.end(),
  };
}

/** The JSON reader holds one element at a time; raw text may be pretty-printed, so it may exceed the row cap. */
const MAX_ELEMENT_CHARS = 4 * MAX_ROW_BYTES;

/**
 * JSON: an array of objects, one row each; the columns are the keys in the order they first appear
 * (each named, at most 500 in all). Values are kept as they are (text, numbers, objects …).
 */
function jsonReader(columns: string[], onRow: RowSink): TextReader {
  const known = new Set<string>();
  const lines = new LineTracker(MAX_ELEMENT_CHARS + (1 << 20));
  const json: JsonStreamReader = new JsonStreamReader(
    {
      descend: (path) => path.length === 0,
      onContainerStart: (path, kind) => {
        if (path.length === 0 && kind !== "array") throw new DatasetFileError("the file must be a JSON array of objects; it holds an object");
      },
      onValue: (path, value) => {
        const line = lines.lineAt(json.valueStart);
        if (path.length === 0) throw new DatasetFileError(`line ${line}: the file must be a JSON array of objects`);
        if (value === null || typeof value !== "object" || Array.isArray(value)) {
          const kind = Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`;
          throw new DatasetFileError(`line ${line}: element ${path[0]} of the array is ${kind}, not an object`);
        }
        for (const key of Object.keys(value)) {
          if (known.has(key)) continue;
          checkName(key, line, `a key of element ${path[0]}`);
          if (known.size >= MAX_FILE_COLUMNS) throw tooManyColumns(line);
          known.add(key);
          columns.push(key);
        }
        const text = JSON.stringify(value);
        if (overBytes(text, MAX_ROW_BYTES)) throw rowTooLarge(line);
        onRow(text, line);
      },
    },
    MAX_ELEMENT_CHARS,
  );
  return {
    write: (t) => {
      lines.add(t);
      try {
        json.write(t);
      } catch (err) {
        if (!(err instanceof JsonStreamError)) throw err;
        const line = lines.lineAt(err.position);
        if (err.reason.startsWith("value larger than")) throw rowTooLarge(line);
        throw new DatasetFileError(`line ${line}: not valid JSON (${err.reason})`);
      }
    },
    end: () => {
      try {
        json.end();
      } catch (err) {
        if (!(err instanceof JsonStreamError)) throw err;
        if (err.reason === "no JSON value") throw new DatasetFileError("the file is empty");
        throw new DatasetFileError(`line ${lines.lineAt(err.position)}: not valid JSON (${err.reason})`);
      }
    },
  };
}

/** Bytes handed to the parser at a time: an R2 read can be a whole multipart part. */
const SLICE_BYTES = 256 * 1024;

/**
 * Reads a stored file through the reader of its format, calling onRow for each row in file order;
 * `afterSlice` runs between slices (the fill job writes what gathered) and stops the read when it
 * answers false. The columns (known once the header or each key is read) and the row count are returned.
 */
export async function readDatasetFile(
  object: R2ObjectBody,
  format: ImportFormat,
  onRow: RowSink,
  afterSlice: () => Promise<boolean> = async () => true,
): Promise<{ columns: string[]; rows: number }> {
  const columns: string[] = [];
  let rows = 0;
  const reader = (format === "csv" ? csvReader : jsonReader)(columns, (values, line) => {
    rows++;
    onRow(values, line);
  });
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const decode = (bytes?: Uint8Array) => {
    try {
      return bytes ? text.decode(bytes, { stream: true }) : text.decode();
    } catch {
      throw new DatasetFileError("the file is not UTF-8 text");
    }
  };
  const body = object.body.getReader();
  try {
    for (;;) {
      const { done, value } = await body.read();
      if (done) break;
      for (let at = 0; at < value.byteLength; at += SLICE_BYTES) {
        reader.write(decode(value.subarray(at, Math.min(value.byteLength, at + SLICE_BYTES))));
        if (!(await afterSlice())) return { columns, rows };
      }
    }
    reader.write(decode());
    reader.end();
  } catch (err) {
    if (err instanceof CsvError) throw new DatasetFileError(err.message);
    throw err;
  } finally {
    await body.cancel().catch(() => undefined);
  }
  return { columns, rows };
}

/** A file's content problem as the request's answer: 413 for a row over the cap, else 400. */
function contentError(err: DatasetFileError): ApiError {
  return new ApiError(err.tooLarge ? "payload_too_large" : "validation_error", `file_content_base64: ${err.message}`);
}

/**
 * from-file: checks the stored file whole (the group first: another workspace's is a 404), then
 * points the group's draft (created when missing) at a new fill job that will load it. The stored
 * file is deleted on any refusal; the job deletes it once it is done with it.
 */
export async function queueFileFill(
  db: Db,
  blobs: R2Bucket,
  auth: AuthContext,
  input: { dataset_group_id: number; file_name: string; file: ReceivedFile | null },
): Promise<{ jobId: number; datasetId: number; datasetGroupId: number }> {
  const { file } = input;
  const drop = () => (file?.blobKey ? blobs.delete(file.blobKey) : Promise.resolve());
  try {
    if (file?.error) throw new ApiError("validation_error", file.error);
    if (!file?.blobKey || file.bytes === 0) throw new ApiError("validation_error", "file_content_base64: the file is empty");
    const group = await requireGroup(db, auth.workspaceId, input.dataset_group_id);
    const format = formatOf(input.file_name)!;
    const object = await blobs.get(file.blobKey);
    if (!object) throw new Error(`the file just stored under ${file.blobKey} is gone`);
    let found;
    try {
      found = await readDatasetFile(object, format, () => undefined);
    } catch (err) {
      if (err instanceof DatasetFileError) throw contentError(err);
      throw err;
    }
    if (found.rows === 0) throw new ApiError("validation_error", "file_content_base64: the file holds no rows");
    const params: FileFillParams = { blob_key: file.blobKey, file_name: input.file_name, format, bytes: file.bytes, rows: found.rows, columns: found.columns };
    return await queueDraftJob(db, auth, group.id, { file: params }, null);
  } catch (err) {
    await drop();
    throw err;
  }
}
