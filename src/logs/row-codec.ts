// Pure: how a request log's blueprints are stored. The input and output blueprints and the
// parameters are JSON of a few KB whose text is, for the most part, the log's input_text and
// output_text a second time (those stay plain columns: filters, FTS and imports read them in SQL).
// So the three are stored as one raw-DEFLATE stream whose preset dictionary is those two texts: the
// messages' text becomes back-references, and what is left is the JSON around it. Every writer and
// reader of request_logs goes through encodeBlueprints / decodeBlueprints.
//
// Stored form (docs/storage.md): `body` = one format byte followed by the raw DEFLATE stream of the
// UTF-8 JSON `[input, output, parameters]`; the columns input, output and parameters are then ''.
// Format 1: compressed with the dictionary UTF-8(input_text + "\n" + output_text) (its last 32 KiB,
// the DEFLATE window). Format 2: no dictionary, for texts D1 might not hand back exactly as given
// (a NUL character, an unpaired surrogate), since decoding needs the very same dictionary bytes.
// Small blueprints, and every log written before this format, have body NULL and the three columns
// as JSON text.
// The runtime's own zlib (node:zlib, the nodejs_compat flag): native, about five times faster than a
// JavaScript DEFLATE on these bodies, and the same raw DEFLATE stream format, so the bodies stored
// before read back alike.
import { deflateRawSync, inflateRawSync } from "node:zlib";

export interface Blueprints {
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  parameters: Record<string, unknown>;
}

/** The derived texts the dictionary is made of; they must be stored exactly as given here. */
export interface LogTexts {
  inputText: string;
  outputText: string;
}

export interface StoredBlueprints {
  input: string;
  output: string;
  parameters: string;
  body: Uint8Array | null;
}

/** A BLOB as the D1 binding returns it (an array of byte values), or as drizzle maps it. */
export type BlobValue = ArrayBuffer | Uint8Array | readonly number[];

export interface StoredLogParts {
  input: string;
  output: string;
  parameters: string;
  body: BlobValue | null;
  inputText: string;
  outputText: string;
}

const DEFLATE_WITH_TEXTS = 1;
const DEFLATE = 2;

/** Below this many bytes of JSON the blueprints stay plain: too little to gain. */
const MIN_COMPRESSED_BYTES = 256;

/** Texts that may not come back from D1 byte for byte: NUL, or a surrogate without its pair. */
const UNSAFE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

function dictionaryOf(texts: LogTexts): Uint8Array | undefined {
  const dict = utf8.encode(`${texts.inputText}\n${texts.outputText}`);
  // DEFLATE keeps the last 32 KiB of a dictionary (its window) on both sides.
  return dict.length > 1 ? dict : undefined;
}

/** The stored columns of a log's blueprints: compressed into `body` when that is smaller. */
export function encodeBlueprints(b: Blueprints, texts: LogTexts): StoredBlueprints {
  const input = JSON.stringify(b.input);
  const output = JSON.stringify(b.output);
  const parameters = JSON.stringify(b.parameters);
  const json = utf8.encode(`[${input},${output},${parameters}]`);
  if (json.length < MIN_COMPRESSED_BYTES) return { input, output, parameters, body: null };
  const withTexts = !UNSAFE_TEXT.test(texts.inputText) && !UNSAFE_TEXT.test(texts.outputText);
  const dictionary = withTexts ? dictionaryOf(texts) : undefined;
  const stream = deflateRawSync(json, { level: 6, ...(dictionary ? { dictionary } : {}) });
  // JSON.stringify escapes lone surrogates, so this UTF-8 is lossless, and its length less the
  // brackets and two commas is what the plain columns would hold.
  if (stream.length + 1 >= json.length - 4) return { input, output, parameters, body: null };
  const body = new Uint8Array(stream.length + 1);
  body[0] = withTexts ? DEFLATE_WITH_TEXTS : DEFLATE;
  body.set(stream, 1);
  return { input: "", output: "", parameters: "", body };
}

function bytesOf(v: BlobValue): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  return Uint8Array.from(v);
}

/** A log's blueprints from its stored columns, in either form. */
export function decodeBlueprints(row: StoredLogParts): Blueprints {
  if (row.body == null) {
    return {
      input: JSON.parse(row.input) as Record<string, unknown>,
      output: JSON.parse(row.output) as Record<string, unknown>,
      parameters: JSON.parse(row.parameters) as Record<string, unknown>,
    };
  }
  const bytes = bytesOf(row.body);
  if (bytes[0] !== DEFLATE_WITH_TEXTS && bytes[0] !== DEFLATE) throw new Error(`request log body: unknown format ${bytes[0]}`);
  const dictionary = bytes[0] === DEFLATE_WITH_TEXTS ? dictionaryOf(row) : undefined;
  const json = fromUtf8.decode(inflateRawSync(bytes.subarray(1), dictionary ? { dictionary } : {}));
  const [input, output, parameters] = JSON.parse(json) as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
  return { input, output, parameters };
}

/** Hex of a body, for a row that travels inside JSON (read back with SQL's unhex()). */
export function hexOf(body: Uint8Array | null): string | null {
  if (body === null) return null;
  let s = "";
  for (const b of body) s += b.toString(16).padStart(2, "0");
  return s;
}
