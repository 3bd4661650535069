import { strToU8, zipSync, type Zippable } from "fflate";
import { describe, expect, it } from "vitest";
import { entryName, unzipBytes, zipStream, ZipCollector, type UnzipLimits } from "../../src/lib/zip";

const LIMITS: UnzipLimits = { maxFiles: 5, maxFileBytes: 1000, maxTotalBytes: 3000, maxRatio: 100, maxRatioAfterBytes: 10_000 };
const unzip = (bytes: Uint8Array, limits: Partial<UnzipLimits> = {}) => unzipBytes(bytes, "archive", { ...LIMITS, ...limits });
const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));

describe("ZipCollector", () => {
  it("reads deflated and stored entries, skipping folders and macOS noise", () => {
    const bin = random(300);
    const files = unzip(
      zipSync({
        "a/SKILL.md": strToU8("hello"),
        "a/": new Uint8Array(0),
        "bin.dat": [bin, { level: 0 }],
        "__MACOSX/a/._SKILL.md": strToU8("junk"),
        ".DS_Store": strToU8("junk"),
        "empty.txt": new Uint8Array(0),
      } as Zippable),
    );
    expect(files.map((f) => f.name).sort()).toEqual(["a/SKILL.md", "bin.dat", "empty.txt"]);
    expect([...files.find((f) => f.name === "bin.dat")!.data]).toEqual([...bin]);
  });

  it("reads an archive pushed one byte at a time", () => {
    const bytes = zipSync({ "x.txt": strToU8("x".repeat(500)), "y.txt": random(200) });
    const z = new ZipCollector("archive", LIMITS);
    for (let i = 0; i < bytes.length; i++) z.push(bytes.subarray(i, i + 1), i === bytes.length - 1);
    expect(z.files.map((f) => [f.name, f.data.length])).toEqual([["x.txt", 500], ["y.txt", 200]]);
  });

  it("takes maxFiles files and refuses one more (413)", () => {
    const five = Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`f${i}`, strToU8("x")]));
    expect(unzip(zipSync(five))).toHaveLength(5);
    expect(() => unzip(zipSync({ ...five, f6: strToU8("x") }))).toThrow(/has more than 5 files/);
  });

  it("takes a file of maxFileBytes and refuses one byte more (413), while inflating", () => {
    expect(unzip(zipSync({ a: random(1000) }))[0].data.length).toBe(1000);
    let err: any;
    try {
      unzip(zipSync({ a: random(1001) }));
    } catch (e) {
      err = e;
    }
    expect(err.code).toBe("payload_too_large");
    expect(err.message).toMatch(/archive: a is larger than 1000 bytes/);
  });

  it("refuses an archive that inflates past maxTotalBytes (413)", () => {
    expect(unzip(zipSync({ a: random(1000), b: random(1000), c: random(1000) }))).toHaveLength(3);
    expect(() => unzip(zipSync({ a: random(1000), b: random(1000), c: random(1000), d: random(1) }))).toThrow(/inflates to more than 3000 bytes/);
  });

  it("refuses a compression ratio that marks a bomb (400), before inflating it all", () => {
    // 8 MiB of zeros deflate to ~8 KiB: a 1000:1 ratio.
    const bomb = zipSync({ zeros: new Uint8Array(8 * 1024 * 1024) });
    const limits = { maxFileBytes: 64 << 20, maxTotalBytes: 64 << 20, maxRatioAfterBytes: 1 << 20 };
    let err: any;
    try {
      unzip(bomb, limits);
    } catch (e) {
      err = e;
    }
    expect(err.code).toBe("validation_error");
    expect(err.message).toMatch(/compression ratio above 100:1/);
    // The same bytes at a ratio under the line pass.
    expect(unzip(bomb, { ...limits, maxRatio: 2000 })[0].data.length).toBe(8 * 1024 * 1024);
  });

  it("counts skipped entries (__MACOSX/, .DS_Store) toward the size and ratio limits too", () => {
    const limits = { maxFileBytes: 64 << 20, maxTotalBytes: 64 << 20, maxRatioAfterBytes: 1 << 20 };
    const hidden = zipSync({ "__MACOSX/zeros": new Uint8Array(8 * 1024 * 1024), "a.txt": strToU8("hi") });
    expect(() => unzip(hidden, limits)).toThrow(/compression ratio above 100:1/);
    expect(() => unzip(zipSync({ ".DS_Store": random(4000) }))).toThrow(/inflates to more than 3000 bytes/);
  });

  it("refuses what is not a ZIP, and a truncated one (400)", () => {
    expect(() => unzip(strToU8("just some text"))).toThrow(/archive: is not a ZIP archive/);
    expect(() => unzip(new Uint8Array(0))).toThrow(/archive: is not a ZIP archive/);
    const bytes = zipSync({ a: random(800) });
    expect(() => unzip(bytes.subarray(0, 400))).toThrow(/archive: is not a valid ZIP archive/);
  });

  it("reads UTF-8 names written without the archive's UTF-8 flag", () => {
    const bytes = zipSync({ "ab.md": strToU8("x") });
    // Rewrite the ASCII name "ab" as the UTF-8 bytes of "é", leaving the flag unset as many tools do.
    for (let i = 0; i + 4 < bytes.length; i++) {
      if (bytes[i] === 0x61 && bytes[i + 1] === 0x62 && bytes[i + 2] === 0x2e) bytes.set([0xc3, 0xa9], i);
    }
    expect(unzip(bytes).map((f) => f.name)).toEqual(["é.md"]);
    expect(entryName("caf\u00e9")).toBe("caf\u00e9");
    expect(entryName("plain")).toBe("plain");
    expect(entryName("ünïcode ✓")).toBe("ünïcode ✓");
  });

  it("reads an empty archive as no files", () => {
    expect(unzip(zipSync({}))).toEqual([]);
  });
});

describe("ZipCollector: whole archives only", () => {
  const archive = zipSync({ "one.md": strToU8("first file"), "two.md": strToU8("second file"), "three.md": strToU8("third file") });
  const collect = (bytes: Uint8Array, chunk = 7) => {
    const z = new ZipCollector("archive", LIMITS);
    for (let at = 0; at < bytes.length; at += chunk) z.push(bytes.subarray(at, at + chunk));
    z.push(new Uint8Array(0), true);
    return z.files;
  };

  it("takes the whole archive, fed in any chunk size", () => {
    for (const chunk of [1, 7, 64, archive.length]) expect(collect(archive, chunk).map((f) => f.name), `${chunk}`).toEqual(["one.md", "two.md", "three.md"]);
  });

  it("refuses an archive cut anywhere: inside a file, before the third file, inside the central directory, inside the end record", () => {
    const eocd = archive.length - 22;
    const central = archive.findIndex((_, i) => archive[i] === 0x50 && archive[i + 1] === 0x4b && archive[i + 2] === 0x01 && archive[i + 3] === 0x02);
    const third = archive.findIndex((_, i) => i > 40 && archive[i] === 0x50 && archive[i + 1] === 0x4b && archive[i + 2] === 0x03 && archive[i + 3] === 0x04 && archive.subarray(i + 30, i + 38).every((b, k) => b === "three.md".charCodeAt(k)));
    expect(central).toBeGreaterThan(0);
    expect(third).toBeGreaterThan(0);
    for (const cut of [20, third - 1, third + 10, central, central + 30, eocd, eocd + 10, archive.length - 1]) {
      expect(() => collect(archive.subarray(0, cut)), `cut at ${cut} of ${archive.length}`).toThrow(/is not a complete ZIP archive|is not a valid ZIP archive/);
    }
  });

  it("refuses a central directory that disagrees with the entries read", () => {
    const forged = archive.slice();
    // Rename the first central-directory entry ("one.md" → "on3.md"): the local entries no longer match.
    const central = forged.findIndex((_, i) => forged[i] === 0x50 && forged[i + 1] === 0x4b && forged[i + 2] === 0x01 && forged[i + 3] === 0x02);
    forged[central + 46 + 2] = "3".charCodeAt(0);
    expect(() => collect(forged)).toThrow(/central directory names "on3.md" where "one.md" was read/);
  });

  it("still takes an empty archive and one with a comment", () => {
    expect(collect(zipSync({}))).toEqual([]);
    const commented = zipSync({ "a.md": strToU8("a") }, { comment: "made by a tool" } as never);
    expect(collect(commented).map((f) => f.name)).toEqual(["a.md"]);
  });
});

describe("zipStream", () => {
  it("writes entries that read back byte for byte", async () => {
    const files = [
      { name: "SKILL.md", data: strToU8("# Skill\n") },
      { name: "deep/dir/bin", data: random(5000) },
      { name: "ünïcode.md", data: strToU8("é") },
      { name: "empty", data: new Uint8Array(0) },
    ];
    async function* entries() {
      for (const f of files) yield { name: f.name, read: async () => f.data };
    }
    const bytes = new Uint8Array(await new Response(zipStream(entries())).arrayBuffer());
    const back = unzip(bytes, { maxFileBytes: 1 << 20, maxTotalBytes: 1 << 20 });
    expect(back.map((f) => f.name)).toEqual(files.map((f) => f.name));
    for (const [i, f] of back.entries()) expect([...f.data]).toEqual([...files[i].data]);
  });
});
