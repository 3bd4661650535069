// Creating, listing and revoking API keys. Only the SHA-256 of a key is stored; the key itself is
// returned once, to be printed.
import { createHash, randomBytes } from "node:crypto";
import { d1Execute, lit } from "./wrangler.mjs";

export const PREFIX_LENGTH = 11; // "pe_" + 8 hex characters
const EMAIL = /^[^\s@]+@[^\s@]+$/;

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

/** Creates the workspace and user when missing, then a new key for them. Returns the key. */
export function createKey({ workspace, email, ...target }) {
  const ws = validateWorkspace(workspace);
  const mail = validateEmail(email ?? "dev@localhost");
  const key = newKey();
  const sql = [
    `INSERT INTO workspaces (name) VALUES (${lit(ws)}) ON CONFLICT(name) DO NOTHING;`,
    `INSERT INTO users (workspace_id, email) SELECT id, ${lit(mail)} FROM workspaces WHERE name = ${lit(ws)} ON CONFLICT(workspace_id, email) DO NOTHING;`,
    `INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) SELECT w.id, u.id, ${lit(hashKey(key))}, ${lit(key.slice(0, PREFIX_LENGTH))} FROM workspaces w JOIN users u ON u.workspace_id = w.id AND u.email = ${lit(mail)} WHERE w.name = ${lit(ws)};`,
    `SELECT count(*) AS n FROM api_keys WHERE key_hash = ${lit(hashKey(key))};`,
  ].join("\n");
  const results = d1Execute(sql, target);
  const last = results[results.length - 1];
  if (!last?.[0] || Number(last[0].n) !== 1) throw new Error("the key was not stored");
  return key;
}

/** Whether a key is stored and not revoked (used by `npm run dev` to reuse its saved key). */
export function isActiveKey(key, target = {}) {
  const [rows] = d1Execute(`SELECT count(*) AS n FROM api_keys WHERE key_hash = ${lit(hashKey(key))} AND revoked_at IS NULL;`, target);
  return Number(rows?.[0]?.n ?? 0) === 1;
}

export function listKeys({ workspace, ...target } = {}) {
  const where = workspace ? `WHERE w.name = ${lit(workspace)}` : "";
  const [rows] = d1Execute(
    `SELECT k.prefix, w.name AS workspace, u.email, k.created_at, k.revoked_at FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id JOIN users u ON u.id = k.user_id ${where} ORDER BY k.id;`,
    target,
  );
  return rows;
}

/** Revokes the one active key named by its prefix (or by the whole key); refuses when none or several match. */
export function revokeKey(prefixOrKey, target = {}) {
  if (typeof prefixOrKey !== "string" || prefixOrKey.length < 6) {
    throw new Error("give the key's prefix (as `keys list` shows it) or the whole key");
  }
  const where =
    prefixOrKey.length > PREFIX_LENGTH ? `key_hash = ${lit(hashKey(prefixOrKey))}` : `prefix = ${lit(prefixOrKey)}`;
  const [matches] = d1Execute(`SELECT id FROM api_keys WHERE ${where} AND revoked_at IS NULL;`, target);
  if (matches.length === 0) throw new Error(`no active key matches ${prefixOrKey}`);
  if (matches.length > 1) throw new Error(`${matches.length} active keys share the prefix ${prefixOrKey}; pass the whole key instead`);
  d1Execute(`UPDATE api_keys SET revoked_at = cast(unixepoch('subsec') * 1000 as integer) WHERE id = ${Number(matches[0].id)};`, target);
}
