// Who is calling, as the auth middleware resolves it from X-API-KEY: below every floor, so the log
// store and the services take it without reaching up to the Worker's env (env.ts re-exports it).

/** Who is calling: resolved from X-API-KEY by the auth middleware. */
export interface AuthContext {
  workspaceId: number;
  userId: number;
  userEmail: string;
  apiKeyId: number;
  /**
   * What the key may do (lib/scopes.ts); `["admin"]` for keys made before scopes existed. The auth
   * middleware always sets it; a context without it (a service called in-process) holds no scope.
   */
  scopes?: string[];
  /**
   * The workspace's redaction policy as stored (src/redaction/ reads it), found with the key; null or
   * absent: redaction is off. Its `updatedAt` tells a cached compilation of it from a newer one.
   */
  redaction?: { policy: unknown; updatedAt: number } | null;
  /** The workspace's current log database when the key lookup found it placed (src/logs/shards.ts). */
  logShard?: string | null;
  /** Every log database the workspace has had, oldest first (null: only logShard). */
  logPeriods?: string[] | null;
  /** The current log database was measured full: the request opens a new period. */
  logShardFull?: boolean | null;
}
