// Decodes base64 that arrives in pieces (a request body read chunk by chunk), so a 100 MB file is
// never held whole as text or bytes. Whitespace is ignored and the URL-safe alphabet is accepted;
// padding may only end the input. A bad character is reported with its position.

export class Base64Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Base64Error";
  }
}

type FromBase64 = (s: string) => Uint8Array;
const nativeFromBase64 = (Uint8Array as unknown as { fromBase64?: FromBase64 }).fromBase64?.bind(Uint8Array);

function decodeQuads(s: string): Uint8Array {
  if (nativeFromBase64) return nativeFromBase64(s);
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const WS = /[\t\n\r ]/;
const WS_ALL = /[\t\n\r ]+/g;
const URL_SAFE = /[-_]/;
const INVALID = /[^A-Za-z0-9+/=]/;
const EMPTY = new Uint8Array(0);

export class Base64StreamDecoder {
  private carry = "";
  private padded = false;
  /** Characters seen so far (whitespace included), for error positions. */
  private seen = 0;

  push(text: string): Uint8Array {
    const at = this.seen;
    this.seen += text.length;
    let s = WS.test(text) ? text.replace(WS_ALL, "") : text;
    if (s.length === 0) return EMPTY;
    if (URL_SAFE.test(s)) s = s.replace(/-/g, "+").replace(/_/g, "/");
    const bad = INVALID.exec(s);
    if (bad) throw new Base64Error(`invalid base64 character ${JSON.stringify(bad[0])} near character ${at + bad.index}`);
    if (this.padded && /[^=]/.test(s)) throw new Base64Error(`base64 data continues after its '=' padding near character ${at}`);
    const eq = s.indexOf("=");
    if (eq !== -1) {
      if (/[^=]/.test(s.slice(eq))) throw new Base64Error(`base64 data continues after its '=' padding near character ${at + eq}`);
      this.padded = true;
    }
    const full = this.carry + s;
    const usable = full.length - (full.length % 4);
    this.carry = full.slice(usable);
    if (usable === 0) return EMPTY;
    return this.decode(full.slice(0, usable));
  }

  end(): Uint8Array {
    const rest = this.carry.replace(/=+$/, "");
    this.carry = "";
    if (rest.length === 0) return EMPTY;
    if (rest.length === 1) throw new Base64Error("base64 data is truncated (its length is not valid)");
    return this.decode(rest);
  }

  private decode(s: string): Uint8Array {
    try {
      return decodeQuads(s);
    } catch {
      throw new Base64Error("invalid base64 padding");
    }
  }
}
