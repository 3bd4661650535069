import { describe, expect, it } from "vitest";
import { applyChanges, checkShape, fileSetOf, normalizePath, rootPathFromName, SKILL_MAX_FILES } from "../../../src/services/registry/skill-manifest";

const norm = (p: unknown) => {
  const r = normalizePath(p);
  return r.ok ? r.path : `ERR ${r.message}`;
};

describe("normalizePath", () => {
  it("keeps relative paths, drops . segments, and composes Unicode (NFC)", () => {
    expect(norm("skills/a/SKILL.md")).toBe("skills/a/SKILL.md");
    expect(norm("./skills/./a.md")).toBe("skills/a.md");
    expect(norm("cafe\u0301.md")).toBe("caf\u00e9.md");
    expect(norm(".claude/CLAUDE.md")).toBe(".claude/CLAUDE.md");
  });

  it("refuses absolute paths, .., backslashes, empty names and control characters", () => {
    expect(norm("/etc/passwd")).toMatch(/ERR must be relative/);
    expect(norm("C:/x")).toMatch(/ERR must be relative/);
    expect(norm("a/../b")).toMatch(/ERR must not contain \.\./);
    expect(norm("..")).toMatch(/ERR must not contain \.\./);
    expect(norm("a\\b")).toMatch(/ERR must use \/ as separator/);
    expect(norm("a//b")).toMatch(/ERR must not contain empty names/);
    expect(norm("a/")).toMatch(/ERR must not contain empty names/);
    expect(norm("")).toMatch(/ERR must not be empty/);
    expect(norm(".")).toMatch(/ERR must name a file/);
    expect(norm("a\u0000b")).toMatch(/ERR must not contain control/);
    expect(norm(42)).toMatch(/ERR must be a string/);
  });

  it("takes a path of 1024 bytes and refuses 1025", () => {
    expect(norm("a".repeat(1024))).toBe("a".repeat(1024));
    expect(norm("a".repeat(1025))).toMatch(/ERR must be at most 1024 bytes/);
    expect(norm("é".repeat(513))).toMatch(/ERR must be at most 1024 bytes/);
  });
});

describe("rootPathFromName", () => {
  it("makes lower-case folder-like segments, keeping /", () => {
    expect(rootPathFromName("Customer Support Skills")).toBe("customer-support-skills");
    expect(rootPathFromName("Team/Refunds & Returns")).toBe("team/refunds-returns");
    expect(rootPathFromName("Café")).toBe("cafe");
    expect(rootPathFromName("!!!")).toBe("collection");
    expect(rootPathFromName("a//../b")).toBe("a/b");
  });
});

const base = () => new Map([["a/SKILL.md", "A"], ["a/ref.md", "R"], ["b.md", "B"]]);
const apply = (changes: Partial<Parameters<typeof applyChanges<string>>[1]>) =>
  applyChanges(base(), { moves: [], deletes: [], updates: [], ...changes });
const filesOf = (r: ReturnType<typeof apply>) => (r.ok ? Object.fromEntries(r.files) : r.message);

describe("applyChanges", () => {
  it("moves a file and a whole folder, deletes a file and a folder, creates and overwrites", () => {
    expect(filesOf(apply({ moves: [{ from: "b.md", to: "c/b.md" }] }))).toEqual({ "a/SKILL.md": "A", "a/ref.md": "R", "c/b.md": "B" });
    expect(filesOf(apply({ moves: [{ from: "a", to: "z" }] }))).toEqual({ "z/SKILL.md": "A", "z/ref.md": "R", "b.md": "B" });
    expect(filesOf(apply({ deletes: ["a"] }))).toEqual({ "b.md": "B" });
    expect(filesOf(apply({ deletes: ["b.md"], updates: [{ path: "b.md2", value: "N" }, { path: "a/ref.md", value: "R2" }] }))).toEqual({
      "a/SKILL.md": "A",
      "a/ref.md": "R2",
      "b.md2": "N",
    });
  });

  it("applies moves before deletes before updates", () => {
    expect(filesOf(apply({ moves: [{ from: "b.md", to: "c.md" }], deletes: ["c.md"], updates: [{ path: "b.md", value: "new" }] }))).toEqual({
      "a/SKILL.md": "A",
      "a/ref.md": "R",
      "b.md": "new",
    });
  });

  it("refuses a move whose source is missing or whose target exists", () => {
    expect(filesOf(apply({ moves: [{ from: "nope.md", to: "x.md" }] }))).toBe("moves[0].old_path: nope.md does not exist");
    expect(filesOf(apply({ moves: [{ from: "b.md", to: "a/ref.md" }] }))).toBe("moves[0].new_path: a/ref.md already exists");
    expect(filesOf(apply({ moves: [{ from: "b.md", to: "a" }] }))).toBe("moves[0].new_path: a already exists");
    expect(filesOf(apply({ moves: [{ from: "a", to: "a/inner" }] }))).toBe("moves[0].new_path: cannot move a folder into itself");
    expect(filesOf(apply({ moves: [{ from: "b.md", to: "../x" }] }))).toBe("moves[0].new_path: must not contain ..");
  });

  it("refuses a delete of a missing path, and duplicates", () => {
    expect(filesOf(apply({ deletes: ["nope.md"] }))).toBe("deletes[0]: nope.md does not exist");
    expect(filesOf(apply({ deletes: ["b.md", "./b.md"] }))).toBe("deletes[1]: duplicates deletes[0]");
    expect(filesOf(apply({ updates: [{ path: "x", value: "1" }, { path: "x", value: "2" }] }))).toBe("file_updates[1].path: duplicates file_updates[0].path");
    expect(filesOf(apply({ deletes: ["b.md"], updates: [{ path: "b.md", value: "2" }] }))).toBe("file_updates[0].path: b.md is also in deletes");
  });

  it("refuses a path that would be both a file and a folder", () => {
    expect(filesOf(apply({ updates: [{ path: "b.md/x", value: "1" }] }))).toBe("files: b.md would be both a file and a folder (b.md/x)");
  });

  it("never changes the base", () => {
    const b = base();
    applyChanges(b, { moves: [{ from: "a", to: "z" }], deletes: ["b.md"], updates: [] });
    expect([...b.keys()]).toEqual(["a/SKILL.md", "a/ref.md", "b.md"]);
  });
});

describe("limits", () => {
  const many = (n: number) => new Map(Array.from({ length: n }, (_, i) => [`f${i}`, ""]));
  it(`takes ${SKILL_MAX_FILES} files and refuses one more with payload_too_large`, () => {
    expect(checkShape(many(SKILL_MAX_FILES)).ok).toBe(true);
    const r = checkShape(many(SKILL_MAX_FILES + 1));
    expect(r).toMatchObject({ ok: false, code: "payload_too_large" });
  });

  it("fileSetOf refuses duplicate paths after normalization", () => {
    const r = fileSetOf([{ path: "a.md", value: 1 }, { path: "./a.md", value: 2 }], "files");
    expect(r).toMatchObject({ ok: false, message: "files[1].path: duplicates files[0].path" });
  });
});
