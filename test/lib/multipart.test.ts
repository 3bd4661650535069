import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/lib/errors";
import { boundaryOf, readMultipart, TextFieldSink, type PartInfo } from "../../src/lib/multipart";
import { streamOf } from "../helpers/streams";

const enc = new TextEncoder();

async function parse(body: string | Uint8Array, boundary: string, size = 1 << 16, maxBytes = 1 << 20) {
  const parts: { info: PartInfo; text: string }[] = [];
  const bytes = typeof body === "string" ? enc.encode(body) : body;
  await readMultipart(streamOf(bytes, size), boundary, {
    maxBytes,
    onPart(info) {
      const chunks: Uint8Array[] = [];
      return {
        write: (c) => chunks.push(c.slice()),
        end: () => parts.push({ info, text: new TextDecoder().decode(concat(chunks)) }),
      };
    },
  });
  return parts;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, at), (at += c.length);
  return out;
}

async function fromFormData(fd: FormData): Promise<{ body: Uint8Array; boundary: string }> {
  const req = new Request("http://x/", { method: "POST", body: fd });
  return { body: new Uint8Array(await req.arrayBuffer()), boundary: boundaryOf(req.headers.get("content-type"))! };
}

async function rejects(p: Promise<unknown>, code: string, message: RegExp) {
  const err = await p.then(() => null, (e) => e);
  expect(err).toBeInstanceOf(ApiError);
  expect(err.code).toBe(code);
  expect(err.message).toMatch(message);
}

describe("boundaryOf", () => {
  it("reads plain and quoted boundaries, and nothing from other types", () => {
    expect(boundaryOf("multipart/form-data; boundary=abc123")).toBe("abc123");
    expect(boundaryOf('multipart/form-data; boundary="a b:c"')).toBe("a b:c");
    expect(boundaryOf("multipart/form-data")).toBeNull();
    expect(boundaryOf("application/json")).toBeNull();
    expect(boundaryOf(undefined)).toBeNull();
  });
});

describe("readMultipart", () => {
  it("reads what a FormData body holds, whatever the read sizes", async () => {
    const fd = new FormData();
    fd.append("json", '{"name":"x"}');
    fd.append("files", new Blob([new Uint8Array([0, 13, 10, 45, 45, 255])]), "a.zip");
    fd.append("empty", "");
    const { body, boundary } = await fromFormData(fd);
    for (const size of [1, 2, 7, 64, body.length]) {
      const parts = await parse(body, boundary, size);
      expect(parts.map((p) => p.info.name)).toEqual(["json", "files", "empty"]);
      expect(parts[0].text).toBe('{"name":"x"}');
      expect(parts[1].info.filename).toBe("a.zip");
      expect(parts[2].text).toBe("");
    }
  });

  it("keeps binary bytes exactly, including CR LF and dashes next to the boundary", async () => {
    const payload = new Uint8Array([13, 10, 45, 45, 13, 10, 0, 1, 2, 13, 10]);
    const fd = new FormData();
    fd.append("archive", new Blob([payload]), "x.bin");
    const { body, boundary } = await fromFormData(fd);
    const got: Uint8Array[] = [];
    await readMultipart(streamOf(body, 3), boundary, { maxBytes: 1 << 20, onPart: () => ({ write: (c) => got.push(c.slice()), end() {} }) });
    expect([...concat(got)]).toEqual([...payload]);
  });

  it("skips a preamble and an epilogue", async () => {
    const body = "preamble\r\n--b1\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nA\r\n--b1--\r\nepilogue";
    expect((await parse(body, "b1")).map((p) => [p.info.name, p.text])).toEqual([["a", "A"]]);
  });

  it("refuses a body without its closing boundary", async () => {
    await rejects(parse('--b1\r\nContent-Disposition: form-data; name="a"\r\n\r\nA', "b1"), "validation_error", /closing boundary/);
    await rejects(parse("", "b1"), "validation_error", /closing boundary/);
  });

  it("refuses a part without a name or without Content-Disposition", async () => {
    await rejects(parse('--b1\r\nContent-Disposition: form-data\r\n\r\nA\r\n--b1--', "b1"), "validation_error", /no name/);
    await rejects(parse("--b1\r\nContent-Type: text/plain\r\n\r\nA\r\n--b1--", "b1"), "validation_error", /Content-Disposition/);
  });

  it("answers 413 once more than maxBytes arrive, counted on the stream", async () => {
    const body = `--b1\r\nContent-Disposition: form-data; name="a"\r\n\r\n${"x".repeat(1000)}\r\n--b1--`;
    const size = enc.encode(body).length;
    expect(await parse(body, "b1", 100, size)).toHaveLength(1);
    await rejects(parse(body, "b1", 100, size - 1), "payload_too_large", /larger than/);
  });

  it("TextFieldSink refuses a field over its limit", () => {
    const sink = new TextFieldSink("metadata", 4);
    sink.write(enc.encode("abcd"));
    expect(() => sink.write(enc.encode("e"))).toThrow(/metadata: is larger than 4 bytes/);
  });
});
