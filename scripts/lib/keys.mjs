// Creating, listing and revoking API keys. Only the SHA-256 of a key is stored; the key itself is
// returned once, to be printed.
//
// Each operation checks its arguments when it is built, then is a generator that yields the statements
// of one batch at a time and gets back their rows. The same operation runs through wrangler (`run`,
// synchronous: local or --remote, one wrangler process per batch) or on an open D1 binding (`runOn`,
// what the keys CLI does locally: one runtime for all of a command's batches).
import { createHash, randomBytes } from "node:crypto";
import { d1Execute, lit } from "./wrangler.mjs";

export const PREFIX_LENGTH = 11; // "pe_" + 8 hex characters

/** The scopes a key may hold (src/lib/scopes.ts says what each allows; keep the two lists alike). */
export const SCOPES = [
  "admin",
  "read",
  ...["logs", "prompts", "workflows", "datasets", "evaluations", "tables", "tools", "webhooks", "signals", "settings"].flatMap((a) => [`${a}:read`, `${a}:write`]),
];

/** `--scopes a,b` as a list (default admin, as every key made before scopes). */
export function validateScopes(text) {
  if (text === undefined) return ["admin"];
  const scopes = [...new Set(String(text).split(",").map((s) => s.trim()).filter(Boolean))];
  if (scopes.length === 0) throw new Error("--scopes must name at least one scope");
  const unknown = scopes.filter((s) => !SCOPES.includes(s));
  if (unknown.length > 0) throw new Error(`--scopes: unknown scope ${unknown.join(", ")} (scopes: ${SCOPES.join(", ")})`);
  return scopes;
}

function validateName(name) {
  if (name === undefined) return null;
  if (typeof name !== "string" || name.trim().length === 0 || name.length > 128) throw new Error("--name must be 1 to 128 characters");
  return name.trim();
}

/** The audit row of a key made or revoked by the CLI (no key acted: api_key_id and user_id stay null). */
const auditRow = (action, keyWhere, details) =>
  `INSERT INTO audit_events (workspace_id, action, target_type, target_id, details) SELECT workspace_id, ${lit(action)}, 'api_key', CAST(id AS TEXT), ${details} FROM api_keys WHERE ${keyWhere};`;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const DEFAULT_EMAIL = "dev@localhost";

export function newKey() {
  return `pe_${randomBytes(24).toString("hex")}`;
}

export function hashKey(key) {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function validateWorkspace(name) {
  if (typeof name !== "string" || name.trim().length === 0 || name.length > 128) {
    throw new Error("--workspace must be a name of 1 to 128 characters");
  }
  return name.trim();
}

export function validateEmail(email) {
  if (!EMAIL.test(email) || email.length > 320) throw new Error(`--email must be an e-mail address, got ${JSON.stringify(email)}`);
  return email;
}

function validatePrefix(prefixOrKey) {
  if (typeof prefixOrKey !== "string" || prefixOrKey.length < 6) {
    throw new Error("give the key's prefix (as `keys list` shows it) or the whole key");
  }
  return prefixOrKey;
}

/** Runs an operation through wrangler (target: { remote } or { persistTo }); returns its result. */
export function run(op, target = {}) {
  let step = op.next();
  while (!step.done) step = op.next(d1Execute(step.value.join("\n"), target));
  return step.value;
}

/** Runs an operation on `db`, an open D1 binding of the control database; resolves to its result. */
export async function runOn(db, op) {
  let step = op.next();
  while (!step.done) {
    const results = await db.batch(step.value.map((statement) => db.prepare(statement)));
    step = op.next(results.map((r) => r.results ?? []));
  }
  return step.value;
}

/** Creates the workspace and user when missing, then a new key for them (admin unless scopes say less). Its result is the key. */
export function creating({ workspace, email, scopes, name, legacy = false }) {
  const ws = validateWorkspace(workspace);
  const mail = validateEmail(email ?? DEFAULT_EMAIL);
  const keyScopes = Array.isArray(scopes) ? validateScopes(scopes.join(",")) : validateScopes(scopes);
  const keyName = validateName(name);
  return (function* () {
    const key = newKey();
    const hash = lit(hashKey(key));
    // `legacy`: a database from before scopes and the audit log (an older checkout's, for a
    // before/after benchmark) gets the key as that checkout's CLI made it: every key was admin then.
    const modern = !legacy;
    if (legacy && (keyName !== null || keyScopes.join() !== "admin")) throw new Error("a database from before scopes takes no --scopes or --name");
    const results = yield [
      `INSERT INTO workspaces (name) VALUES (${lit(ws)}) ON CONFLICT(name) DO NOTHING;`,
      `INSERT INTO users (workspace_id, email) SELECT id, ${lit(mail)} FROM workspaces WHERE name = ${lit(ws)} ON CONFLICT(workspace_id, email) DO NOTHING;`,
      modern
        ? `INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix, name, scopes) SELECT w.id, u.id, ${hash}, ${lit(key.slice(0, PREFIX_LENGTH))}, ${keyName === null ? "NULL" : lit(keyName)}, ${lit(JSON.stringify(keyScopes))} FROM workspaces w JOIN users u ON u.workspace_id = w.id AND u.email = ${lit(mail)} WHERE w.name = ${lit(ws)};`
        : `INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) SELECT w.id, u.id, ${hash}, ${lit(key.slice(0, PREFIX_LENGTH))} FROM workspaces w JOIN users u ON u.workspace_id = w.id AND u.email = ${lit(mail)} WHERE w.name = ${lit(ws)};`,
      ...(modern ? [auditRow("api_key.created", `key_hash = ${hash}`, `json_object('name', name, 'prefix', prefix, 'scopes', json(scopes), 'by', 'keys CLI')`)] : []),
      `SELECT count(*) AS n FROM api_keys WHERE key_hash = ${hash};`,
    ];
    const last = results[results.length - 1];
    if (!last?.[0] || Number(last[0].n) !== 1) throw new Error("the key was not stored");
    return key;
  })();
}

/** The keys (of one workspace, or all), oldest first. */
export function listing({ workspace } = {}) {
  const where = workspace ? `WHERE w.name = ${lit(workspace)}` : "";
  return (function* () {
    const [rows] = yield [
      `SELECT k.prefix, k.name, k.scopes, w.name AS workspace, u.email, k.created_at, k.revoked_at FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id JOIN users u ON u.id = k.user_id ${where} ORDER BY k.id;`,
    ];
    return rows;
  })();
}

/** Revokes the one active key named by its prefix (or by the whole key); refuses when none or several match. */
export function revoking(prefixOrKey) {
  validatePrefix(prefixOrKey);
  const where =
    prefixOrKey.length > PREFIX_LENGTH ? `key_hash = ${lit(hashKey(prefixOrKey))}` : `prefix = ${lit(prefixOrKey)}`;
  return (function* () {
    const [matches] = yield [`SELECT id FROM api_keys WHERE ${where} AND revoked_at IS NULL;`];
    if (matches.length === 0) throw new Error(`no active key matches ${prefixOrKey}`);
    if (matches.length > 1) throw new Error(`${matches.length} active keys share the prefix ${prefixOrKey}; pass the whole key instead`);
    const id = Number(matches[0].id);
    yield [
      auditRow("api_key.revoked", `id = ${id} AND revoked_at IS NULL`, `json_object('name', name, 'prefix', prefix, 'scopes', json(scopes), 'by', 'keys CLI')`),
      `UPDATE api_keys SET revoked_at = cast(unixepoch('subsec') * 1000 as integer) WHERE id = ${id};`,
    ];
  })();
}

/** Whether a key is stored and not revoked. */
export function checkingActive(key) {
  return (function* () {
    const [rows] = yield [`SELECT count(*) AS n FROM api_keys WHERE key_hash = ${lit(hashKey(key))} AND revoked_at IS NULL;`];
    return Number(rows?.[0]?.n ?? 0) === 1;
  })();
}

// Through wrangler, for `npm run dev`, the test servers and the benchmarks.

/** Creates the workspace and user when missing, then a new key for them. Returns the key. */
export function createKey({ workspace, email, scopes, name, legacy, ...target }) {
  return run(creating({ workspace, email, scopes, name, legacy }), target);
}

/** Whether a key is stored and not revoked (used by `npm run dev` to reuse its saved key). */
export function isActiveKey(key, target = {}) {
  return run(checkingActive(key), target);
}

export function listKeys({ workspace, ...target } = {}) {
  return run(listing({ workspace }), target);
}

export function revokeKey(prefixOrKey, target = {}) {
  run(revoking(prefixOrKey), target);
}
