// Pure rules of skill collection file sets: path normalization, and applying a version's changes
// (moves, deletes, file updates) to the previous file set. Tagged results, no I/O.

export const SKILL_MAX_FILES = 1000;
export const SKILL_MAX_FILE_BYTES = 5 * 1024 * 1024;
export const SKILL_MAX_PATH_BYTES = 1024;

export type Failure = { ok: false; code: "validation_error" | "payload_too_large"; message: string };
export type Result<T> = ({ ok: true } & T) | Failure;

const invalid = (message: string): Failure => ({ ok: false, code: "validation_error", message });

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const utf8 = new TextEncoder();

/**
 * A path as stored: relative, `/`-separated, Unicode NFC (so the same name typed two ways is one
 * file), with `.` segments dropped. Absolute paths, drive letters, backslashes, `..`, empty names
 * and control characters are refused, so extracting a collection can never write outside its folder.
 */
export function normalizePath(raw: unknown): Result<{ path: string }> {
  if (typeof raw !== "string") return invalid("must be a string");
  const s = raw.normalize("NFC");
  if (s.length === 0) return invalid("must not be empty");
  if (s.includes("\\")) return invalid("must use / as separator, not backslashes");
  if (CONTROL.test(s)) return invalid("must not contain control characters");
  if (s.startsWith("/") || /^[A-Za-z]:/.test(s)) return invalid("must be relative (no leading / or drive letter)");
  const segments: string[] = [];
  for (const seg of s.split("/")) {
    if (seg === "") return invalid("must not contain empty names (// or a trailing /)");
    if (seg === "..") return invalid("must not contain ..");
    if (seg !== ".") segments.push(seg);
  }
  if (segments.length === 0) return invalid("must name a file");
  const path = segments.join("/");
  if (utf8.encode(path).length > SKILL_MAX_PATH_BYTES) return invalid(`must be at most ${SKILL_MAX_PATH_BYTES} bytes`);
  return { ok: true, path };
}

/** A folder-like root path for a collection named `name`: lower-case segments of [a-z0-9._-]. */
export function rootPathFromName(name: string): string {
  const segments = name
    .normalize("NFKD")
    .toLowerCase()
    .split("/")
    .map((seg) => seg.replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, ""))
    .filter((seg) => seg !== "");
  return segments.length > 0 ? segments.join("/") : "collection";
}

export interface Move {
  from: string;
  to: string;
}

export interface Changes<T> {
  moves: { from: unknown; to: unknown }[];
  deletes: unknown[];
  updates: { path: unknown; value: T }[];
  /** Field names for messages, e.g. "file_updates", "moves", "deletes". */
  fields?: { moves?: string; deletes?: string; updates?: string };
}

/** Paths under a folder `dir` (a path without a trailing slash). */
function under(files: Map<string, unknown>, dir: string): string[] {
  const prefix = `${dir}/`;
  return [...files.keys()].filter((p) => p.startsWith(prefix));
}

/**
 * The new file set: `base`, then the moves in order (a file or a whole folder; the source must
 * exist, the target must not), then the deletes (a file or a folder; must exist), then the updates
 * (create or overwrite). A path may appear once in updates, once in deletes, and not in both.
 */
export function applyChanges<T>(base: Map<string, T>, changes: Changes<T>): Result<{ files: Map<string, T> }> {
  const f = { moves: "moves", deletes: "deletes", updates: "file_updates", ...changes.fields };
  const files = new Map(base);

  for (const [i, mv] of changes.moves.entries()) {
    const from = normalizePath(mv.from);
    if (!from.ok) return invalid(`${f.moves}[${i}].old_path: ${from.message}`);
    const to = normalizePath(mv.to);
    if (!to.ok) return invalid(`${f.moves}[${i}].new_path: ${to.message}`);
    if (from.path === to.path) continue;
    if (files.has(from.path)) {
      if (files.has(to.path) || under(files, to.path).length > 0) return invalid(`${f.moves}[${i}].new_path: ${to.path} already exists`);
      files.set(to.path, files.get(from.path)!);
      files.delete(from.path);
      continue;
    }
    const inside = under(files, from.path);
    if (inside.length === 0) return invalid(`${f.moves}[${i}].old_path: ${from.path} does not exist`);
    if (to.path.startsWith(`${from.path}/`)) return invalid(`${f.moves}[${i}].new_path: cannot move a folder into itself`);
    if (files.has(to.path) || under(files, to.path).length > 0) return invalid(`${f.moves}[${i}].new_path: ${to.path} already exists`);
    for (const p of inside) {
      files.set(`${to.path}${p.slice(from.path.length)}`, files.get(p)!);
      files.delete(p);
    }
  }

  const deleted = new Map<string, number>();
  for (const [i, raw] of changes.deletes.entries()) {
    const d = normalizePath(raw);
    if (!d.ok) return invalid(`${f.deletes}[${i}]: ${d.message}`);
    if (deleted.has(d.path)) return invalid(`${f.deletes}[${i}]: duplicates ${f.deletes}[${deleted.get(d.path)}]`);
    deleted.set(d.path, i);
    if (files.delete(d.path)) continue;
    const inside = under(files, d.path);
    if (inside.length === 0) return invalid(`${f.deletes}[${i}]: ${d.path} does not exist`);
    for (const p of inside) files.delete(p);
  }

  const updated = new Map<string, number>();
  for (const [i, u] of changes.updates.entries()) {
    const p = normalizePath(u.path);
    if (!p.ok) return invalid(`${f.updates}[${i}].path: ${p.message}`);
    if (updated.has(p.path)) return invalid(`${f.updates}[${i}].path: duplicates ${f.updates}[${updated.get(p.path)}].path`);
    if (deleted.has(p.path)) return invalid(`${f.updates}[${i}].path: ${p.path} is also in ${f.deletes}`);
    updated.set(p.path, i);
    files.set(p.path, u.value);
  }

  const shape = checkShape(files);
  return shape.ok ? { ok: true, files } : shape;
}

/** The limits every version obeys: at most SKILL_MAX_FILES files, and no path both a file and a folder. */
export function checkShape(files: Map<string, unknown>): Result<object> {
  if (files.size > SKILL_MAX_FILES) {
    return { ok: false, code: "payload_too_large", message: `files: a version holds at most ${SKILL_MAX_FILES} files (this one would hold ${files.size})` };
  }
  for (const p of files.keys()) {
    for (let at = p.indexOf("/"); at !== -1; at = p.indexOf("/", at + 1)) {
      const dir = p.slice(0, at);
      if (files.has(dir)) return invalid(`files: ${dir} would be both a file and a folder (${p})`);
    }
  }
  return { ok: true };
}

/** Builds a file set from a list of (raw path, value), refusing bad and duplicate paths. */
export function fileSetOf<T>(entries: { path: unknown; value: T }[], field: string, label = (i: number) => `${field}[${i}].path`): Result<{ files: Map<string, T> }> {
  const files = new Map<string, T>();
  const seen = new Map<string, number>();
  for (const [i, e] of entries.entries()) {
    const p = normalizePath(e.path);
    if (!p.ok) return invalid(`${label(i)}: ${p.message}`);
    if (seen.has(p.path)) return invalid(`${label(i)}: duplicates ${label(seen.get(p.path)!)}`);
    seen.set(p.path, i);
    files.set(p.path, e.value);
  }
  return { ok: true, files };
}
