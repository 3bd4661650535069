import { deflateSync as fflateDeflate } from "fflate";
import { describe, expect, it } from "vitest";
import { searchColumnsOf } from "../../src/logs/index-rows";
import { decodeBlueprints, encodeBlueprints, hexOf, type Blueprints } from "../../src/logs/row-codec";

/** Encodes as a writer does (texts derived from the blueprints), stores as D1 would, decodes. */
function roundTrip(b: Blueprints, storeText = (t: string) => t) {
  const search = searchColumnsOf(b);
  const stored = encodeBlueprints(b, search);
  // D1 hands a BLOB back as an array of byte values.
  const body = stored.body === null ? null : Array.from(stored.body);
  const decoded = decodeBlueprints({ ...stored, body, inputText: storeText(search.inputText), outputText: storeText(search.outputText) });
  return { stored, decoded };
}

const chat = (system: string, user: string, answer: string): Blueprints => ({
  input: { type: "chat", messages: [{ role: "system", content: [{ type: "text", text: system }] }, { role: "user", content: [{ type: "text", text: user }] }] },
  output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: answer }] }] },
  parameters: { temperature: 0.2, max_tokens: 512 },
});

const prose = (n: number, seed = 1) => {
  const words = ["order", "refund", "invoice", "quarter", "revenue", "ticket", "the", "of", "and", "customer", "policy", "delivery"];
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(words[x % words.length] + (x % 7 === 0 ? String(x % 1000) : ""));
  }
  return out.join(" ");
};

describe("row codec: round trips", () => {
  it("a typical chat log is stored compressed, with the JSON columns empty, and comes back equal", () => {
    const b = chat(prose(200, 1), prose(60, 2), prose(150, 3));
    const { stored, decoded } = roundTrip(b);
    expect(stored.body).not.toBeNull();
    expect(stored.body![0]).toBe(1);
    expect([stored.input, stored.output, stored.parameters]).toEqual(["", "", ""]);
    expect(decoded).toEqual(b);
    // The texts are the dictionary: what is stored is far smaller than the JSON.
    const plain = JSON.stringify(b.input).length + JSON.stringify(b.output).length + JSON.stringify(b.parameters).length;
    expect(stored.body!.length).toBeLessThan(plain / 5);
  });

  it("unicode: accents, CJK, emoji, right-to-left, combining marks, line separators", () => {
    const odd = "Ünïcödé 日本語のテキスト 🎉👩‍👩‍👧 مرحبا e\u0301 tab\there \u2028\u2029 \"q\" \\";
    const b = chat(odd.repeat(20), `${odd} question`, `answer ${odd}`);
    b.parameters = { stop: ["\u0000", "🎉"], "key with \"quotes\"": "\\back\\slash" };
    const { stored, decoded } = roundTrip(b);
    expect(stored.body![0]).toBe(1);
    expect(decoded).toEqual(b);
  });

  it("texts D1 may not return byte for byte (NUL, a lone surrogate) are not used as the dictionary", () => {
    // D1 does not hand such texts back as given (a NUL ends them, an unpaired surrogate turns into
    // U+FFFD): whatever it returns, the body decodes, since format 2 does not read them.
    for (const odd of ["before \u0000 after", "lone \ud800 high", "lone \udc00 low"]) {
      const b = chat(`${odd} ${prose(100, 1)}`, "question", "answer");
      const { stored, decoded } = roundTrip(b, (t) => t.split("\u0000")[0].replace(/[\ud800-\udfff]/g, "\ufffd"));
      expect(stored.body![0]).toBe(2);
      expect(decoded).toEqual(b);
    }
  });

  it("big JSON: a 600 KB conversation with tools and nested objects, texts past the 32 KiB window", () => {
    const messages = Array.from({ length: 300 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: [{ type: "text", text: prose(300, i + 10) }] }));
    const tools = Array.from({ length: 20 }, (_, i) => ({ type: "function", function: { name: `tool_${i}`, parameters: { type: "object", properties: { a: { type: "string", enum: [prose(5, i)] } } } } }));
    const b: Blueprints = {
      input: { type: "chat", messages, tools, nested: { deep: { deeper: [1, 2.5, -3e-7, null, true, { x: "y" }] } } },
      output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: prose(2000, 99) }], tool_calls: [{ id: "c1", type: "function", function: { name: "tool_1", arguments: '{"a":"b"}' } }] }] },
      parameters: { temperature: 1, response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } } },
    };
    expect(JSON.stringify(b).length).toBeGreaterThan(500_000);
    const { stored, decoded } = roundTrip(b);
    expect(stored.body).not.toBeNull();
    expect(decoded).toEqual(b);
  });

  it("empty and small blueprints stay plain JSON (too little to gain)", () => {
    for (const b of [{ input: {}, output: {}, parameters: {} }, { input: { type: "completion", content: "Hello!" }, output: { type: "completion", content: "Hi." }, parameters: { n: 1 } }]) {
      expect(JSON.stringify([b.input, b.output, b.parameters]).length).toBeLessThan(256);
      const { stored, decoded } = roundTrip(b);
      expect(stored).toEqual({ input: JSON.stringify(b.input), output: JSON.stringify(b.output), parameters: JSON.stringify(b.parameters), body: null });
      expect(decoded).toEqual(b);
    }
  });

  it("JSON that does not shrink stays plain (random tokens, no texts)", () => {
    const noise = Array.from({ length: 40 }, (_, i) => ((i * 2654435761) >>> 0).toString(36) + Math.sin(i).toString(36).slice(2, 12));
    const b: Blueprints = { input: { noise }, output: {}, parameters: {} };
    const { stored, decoded } = roundTrip(b);
    expect(decoded).toEqual(b);
    if (stored.body) expect(stored.body.length).toBeLessThan(JSON.stringify(b.input).length);
  });

  it("a completion (content, not messages) and an output without text", () => {
    const b: Blueprints = { input: { type: "completion", content: [{ type: "text", text: prose(100, 5) }] }, output: { type: "completion", content: [] }, parameters: {} };
    const { decoded } = roundTrip(b);
    expect(decoded).toEqual(b);
  });

  it("keeps key order, numbers and a __proto__ key exactly", () => {
    const input = JSON.parse(`{"z":1,"a":2,"__proto__":{"p":1},"n":1.5e300,"m":-0.000001,"messages":[{"role":"user","content":"${prose(80, 7)}"}]}`) as Record<string, unknown>;
    const b: Blueprints = { input, output: { type: "chat", messages: [] }, parameters: { b: 1, a: 2 } };
    const { stored, decoded } = roundTrip(b);
    expect(stored.body).not.toBeNull();
    expect(JSON.stringify(decoded.input)).toBe(JSON.stringify(input));
    expect(JSON.stringify(decoded.parameters)).toBe('{"b":1,"a":2}');
    expect(Object.getPrototypeOf(decoded.input)).toBe(Object.prototype);
  });
});

describe("row codec: stored forms", () => {
  it("reads a legacy row (JSON columns, no body)", () => {
    const b = chat("sys", "hello", "hi");
    const decoded = decodeBlueprints({ input: JSON.stringify(b.input), output: JSON.stringify(b.output), parameters: JSON.stringify(b.parameters), body: null, inputText: "", outputText: "" });
    expect(decoded).toEqual(b);
  });

  it("reads bodies written before the runtime's zlib did the compressing (fflate's raw DEFLATE), dictionaries past 32 KiB included", () => {
    const utf8 = new TextEncoder();
    const cases: [Blueprints, boolean][] = [
      [chat(prose(400, 4), prose(60, 5), prose(120, 6)), true],
      [chat(prose(9000, 7), prose(100, 8), prose(3000, 9)), true],
      [chat(prose(300, 10), prose(30, 11), prose(90, 12)), false],
    ];
    for (const [b, texts] of cases) {
      const search = searchColumnsOf(b);
      const dictionary = utf8.encode(`${search.inputText}\n${search.outputText}`);
      const json = utf8.encode(`[${JSON.stringify(b.input)},${JSON.stringify(b.output)},${JSON.stringify(b.parameters)}]`);
      const stream = fflateDeflate(json, { level: 6, dictionary: texts ? dictionary : undefined });
      const body = new Uint8Array([texts ? 1 : 2, ...stream]);
      expect(decodeBlueprints({ input: "", output: "", parameters: "", body, ...search })).toEqual(b);
    }
    expect(utf8.encode(`${searchColumnsOf(cases[1][0]).inputText}`).length).toBeGreaterThan(32 * 1024);
  });

  it("reads a body handed over as Uint8Array, ArrayBuffer or an array of bytes alike", () => {
    const b = chat(prose(100, 1), prose(20, 2), prose(50, 3));
    const search = searchColumnsOf(b);
    const { body, ...cols } = encodeBlueprints(b, search);
    for (const form of [body!, body!.slice().buffer, Array.from(body!)]) expect(decodeBlueprints({ ...cols, body: form, ...search })).toEqual(b);
  });

  it("refuses a body of an unknown format, and a body read with other texts does not come back as it was", () => {
    const b = chat(prose(100, 1), prose(20, 2), prose(50, 3));
    const search = searchColumnsOf(b);
    const { body, ...cols } = encodeBlueprints(b, search);
    const unknown = Uint8Array.from(body!);
    unknown[0] = 9;
    expect(() => decodeBlueprints({ ...cols, body: unknown, ...search })).toThrow(/unknown format 9/);
    let other: unknown;
    try {
      other = decodeBlueprints({ ...cols, body: body!, inputText: search.inputText.replace(/o/g, "0"), outputText: search.outputText });
    } catch {
      other = "threw";
    }
    expect(other).not.toEqual(b);
  });

  it("hexOf: the body as hex for SQL's unhex(), null stays null", () => {
    expect(hexOf(Uint8Array.from([0, 1, 15, 16, 255]))).toBe("00010f10ff");
    expect(hexOf(null)).toBeNull();
  });
});
