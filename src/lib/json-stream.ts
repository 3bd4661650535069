// A streaming JSON reader: fed text in chunks, it never holds the whole document. Containers the
// caller chooses to descend into are walked token by token; every other value is captured whole
// (within a size cap) and handed over parsed; chosen strings are streamed out in decoded chunks.
// Used for the sheet-import request body (the base64 file field streams, the rest is small) and for
// JSON file imports (each element of the top-level array is one captured value).

export type JsonPath = (string | number)[];

export class JsonStreamError extends Error {
  constructor(
    readonly reason: string,
    readonly position: number,
  ) {
    super(`${reason} at character ${position}`);
    this.name = "JsonStreamError";
  }
}

export interface JsonStreamHandlers {
  /** Walk into the object or array at this path (its members arrive one by one) rather than capture it. */
  descend(path: JsonPath, kind: "object" | "array"): boolean;
  /** Stream the string at this path through onStringChunk rather than capture it. */
  streamString?(path: JsonPath): boolean;
  onValue(path: JsonPath, value: unknown): void;
  onContainerStart?(path: JsonPath, kind: "object" | "array"): void;
  onStringChunk?(path: JsonPath, chunk: string): void;
  onStringEnd?(path: JsonPath): void;
}

interface Frame {
  kind: "object" | "array";
  path: JsonPath;
  /** object: key-or-end | key | colon | value | comma-or-end; array: value-or-end | value | comma-or-end */
  state: string;
  key: string;
  index: number;
}

const enum Mode {
  Structure,
  Capture,
  Key,
  Stream,
}

const enum C {
  Quote = 34,
  Backslash = 92,
  Comma = 44,
  Colon = 58,
  OpenBrace = 123,
  CloseBrace = 125,
  OpenBracket = 91,
  CloseBracket = 93,
  Space = 32,
  Tab = 9,
  Lf = 10,
  Cr = 13,
}

const isWs = (c: number) => c === C.Space || c === C.Lf || c === C.Cr || c === C.Tab;
const SCALAR_START = /[-0-9tfn]/;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

export class JsonStreamReader {
  private readonly stack: Frame[] = [];
  private mode = Mode.Structure;
  private offset = 0;
  private streamed = 0;
  private started = false;
  private done = false;
  // A value (or key) being captured.
  private pieces: string[] = [];
  private capLen = 0;
  private capStart = 0;
  private capPath: JsonPath = [];
  private capKind: "string" | "container" | "scalar" | null = null;
  private capDepth = 0;
  private capInString = false;
  private capEscape = false;
  // A string being streamed.
  private streamPath: JsonPath = [];
  private pendingEscape: string | null = null;

  constructor(
    private readonly h: JsonStreamHandlers,
    /** The largest single captured value, in characters. */
    private readonly maxValueChars = 16 * 1024 * 1024,
  ) {}

  /** Characters read so far. */
  get position(): number {
    return this.offset;
  }

  /** Where the value being handed to onValue (or captured now) starts, in characters from the start. */
  get valueStart(): number {
    return this.capStart;
  }

  /** Raw characters of the streamed strings read so far, escapes counted as written (\\n is 2). */
  get streamedChars(): number {
    return this.streamed;
  }

  write(text: string): void {
    let i = 0;
    const n = text.length;
    while (i < n) {
      switch (this.mode) {
        case Mode.Structure:
          i = this.structure(text, i);
          break;
        case Mode.Capture:
        case Mode.Key:
          i = this.capture(text, i);
          break;
        case Mode.Stream:
          i = this.stream(text, i);
          break;
      }
    }
    this.offset += n;
  }

  end(): void {
    if (this.mode === Mode.Capture && this.capKind === "scalar") this.finishCapture();
    if (this.mode !== Mode.Structure || this.stack.length > 0 || !this.done) {
      throw new JsonStreamError(this.started ? "unexpected end of JSON" : "no JSON value", this.offset);
    }
  }

  private fail(reason: string, at: number): never {
    throw new JsonStreamError(reason, at);
  }

  private structure(text: string, start: number): number {
    let i = start;
    const n = text.length;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (isWs(c)) {
        i++;
        continue;
      }
      const at = this.offset + i;
      const top = this.stack[this.stack.length - 1];
      if (!top) {
        if (this.done) this.fail("unexpected data after the JSON value", at);
        this.started = true;
        return this.beginValue([], text, i);
      }
      if (top.kind === "object") {
        switch (top.state) {
          case "key-or-end":
            if (c === C.CloseBrace) return this.closeFrame(i);
          // falls through: a key
          case "key":
            if (c !== C.Quote) this.fail("expected a property name", at);
            this.startCapture(Mode.Key, top.path, i);
            return i;
          case "colon":
            if (c !== C.Colon) this.fail("expected ':'", at);
            top.state = "value";
            i++;
            continue;
          case "value":
            return this.beginValue([...top.path, top.key], text, i);
          case "comma-or-end":
            if (c === C.Comma) {
              top.state = "key";
              i++;
              continue;
            }
            if (c === C.CloseBrace) return this.closeFrame(i);
            this.fail("expected ',' or '}'", at);
        }
      } else {
        switch (top.state) {
          case "value-or-end":
            if (c === C.CloseBracket) return this.closeFrame(i);
          // falls through: a value
          case "value":
            return this.beginValue([...top.path, top.index], text, i);
          case "comma-or-end":
            if (c === C.Comma) {
              top.state = "value";
              top.index++;
              i++;
              continue;
            }
            if (c === C.CloseBracket) return this.closeFrame(i);
            this.fail("expected ',' or ']'", at);
        }
      }
    }
    return i;
  }

  private beginValue(path: JsonPath, text: string, i: number): number {
    const c = text.charCodeAt(i);
    const kind = c === C.OpenBrace ? "object" : c === C.OpenBracket ? "array" : null;
    if (kind && this.h.descend(path, kind)) {
      this.h.onContainerStart?.(path, kind);
      this.stack.push({ kind, path, state: kind === "object" ? "key-or-end" : "value-or-end", key: "", index: 0 });
      return i + 1;
    }
    if (c === C.Quote && this.h.streamString?.(path)) {
      this.mode = Mode.Stream;
      this.streamPath = path;
      this.pendingEscape = null;
      return i + 1;
    }
    if (!kind && c !== C.Quote && !SCALAR_START.test(text[i])) this.fail(`unexpected character ${JSON.stringify(text[i])}`, this.offset + i);
    this.startCapture(Mode.Capture, path, i);
    return i;
  }

  private closeFrame(i: number): number {
    this.stack.pop();
    this.afterValue();
    return i + 1;
  }

  private afterValue(): void {
    this.mode = Mode.Structure;
    const top = this.stack[this.stack.length - 1];
    if (top) top.state = "comma-or-end";
    else this.done = true;
  }

  private startCapture(mode: Mode, path: JsonPath, i: number): void {
    this.mode = mode;
    this.capPath = path;
    this.pieces = [];
    this.capLen = 0;
    this.capStart = this.offset + i;
    this.capKind = null;
    this.capDepth = 0;
    this.capInString = false;
    this.capEscape = false;
  }

  private capture(text: string, start: number): number {
    let i = start;
    const n = text.length;
    if (this.capKind === null) {
      const c = text.charCodeAt(i);
      if (c === C.Quote) {
        this.capKind = "string";
        this.capInString = true;
      } else if (c === C.OpenBrace || c === C.OpenBracket) {
        this.capKind = "container";
        this.capDepth = 1;
      } else {
        this.capKind = "scalar";
      }
      i++;
    }
    let end = -1;
    if (this.capKind === "scalar") {
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === C.Comma || c === C.CloseBrace || c === C.CloseBracket || isWs(c)) {
          end = i;
          break;
        }
      }
    } else {
      while (i < n) {
        if (this.capEscape) {
          this.capEscape = false;
          i++;
          continue;
        }
        if (this.capInString) {
          const q = text.indexOf('"', i);
          const b = text.indexOf("\\", i);
          if (b !== -1 && (q === -1 || b < q)) {
            this.capEscape = true;
            i = b + 1;
            continue;
          }
          if (q === -1) {
            i = n;
            break;
          }
          this.capInString = false;
          i = q + 1;
          if (this.capKind === "string") {
            end = i;
            break;
          }
          continue;
        }
        const c = text.charCodeAt(i);
        if (c === C.Quote) this.capInString = true;
        else if (c === C.OpenBrace || c === C.OpenBracket) this.capDepth++;
        else if (c === C.CloseBrace || c === C.CloseBracket) {
          if (--this.capDepth === 0) {
            end = i + 1;
            break;
          }
        }
        i++;
      }
    }
    const upto = end === -1 ? n : end;
    this.capLen += upto - start;
    if (this.capLen > this.maxValueChars) this.fail(`value larger than ${this.maxValueChars} characters`, this.capStart);
    this.pieces.push(text.slice(start, upto));
    if (end === -1) return n;
    this.finishCapture();
    return end;
  }

  private finishCapture(): void {
    const raw = this.pieces.length === 1 ? this.pieces[0] : this.pieces.join("");
    this.pieces = [];
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      this.fail(this.mode === Mode.Key ? "invalid property name" : "invalid JSON value", this.capStart);
    }
    if (this.mode === Mode.Key) {
      const top = this.stack[this.stack.length - 1];
      top.key = value as string;
      top.state = "colon";
      this.mode = Mode.Structure;
      return;
    }
    this.h.onValue(this.capPath, value);
    this.afterValue();
  }

  private stream(text: string, start: number): number {
    let i = start;
    const n = text.length;
    while (i < n) {
      if (this.pendingEscape !== null) {
        const at = i;
        i = this.escape(text, i);
        this.streamed += i - at;
        continue;
      }
      const q = text.indexOf('"', i);
      const b = text.indexOf("\\", i);
      const stop = b !== -1 && (q === -1 || b < q) ? b : q;
      if (stop === -1) {
        this.streamed += n - i;
        if (i < n) this.h.onStringChunk?.(this.streamPath, text.slice(i));
        return n;
      }
      this.streamed += stop - i;
      if (stop > i) this.h.onStringChunk?.(this.streamPath, text.slice(i, stop));
      if (stop === q && stop !== b) {
        this.h.onStringEnd?.(this.streamPath);
        this.afterValue();
        return stop + 1;
      }
      this.pendingEscape = "";
      this.streamed += 1;
      i = stop + 1;
    }
    return i;
  }

  /** Decodes an escape sequence after a backslash; it may arrive split across chunks. */
  private escape(text: string, i: number): number {
    const n = text.length;
    let esc = this.pendingEscape!;
    while (i < n && (esc.length === 0 || (esc[0] === "u" && esc.length < 5))) esc += text[i++];
    this.pendingEscape = esc;
    if (esc.length === 0 || (esc[0] === "u" && esc.length < 5)) return i;
    let out: string | undefined;
    if (esc[0] === "u") {
      if (/^u[0-9a-fA-F]{4}$/.test(esc)) out = String.fromCharCode(parseInt(esc.slice(1), 16));
    } else {
      out = ESCAPES[esc];
    }
    if (out === undefined) this.fail(`invalid escape \\${esc}`, this.offset + i - esc.length - 1);
    this.pendingEscape = null;
    this.h.onStringChunk?.(this.streamPath, out);
    return i;
  }
}
