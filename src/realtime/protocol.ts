// The subset of Centrifugo's JSON protocol (client protocol v2) the promptlayer SDK's runWorkflow
// uses, and the tokens that admit a client to one run's channel. Pure: no bindings.
//
// Client → server: frames of newline-separated commands {id, connect|subscribe|unsubscribe}.
// Server → client: replies {id, connect|subscribe|unsubscribe|error} and pushes {push: {channel, pub: {data}}}.
// No pings are announced in the connect reply, so the client expects none.

export type Command = { id?: number; connect?: { token?: unknown }; subscribe?: { channel?: unknown }; unsubscribe?: { channel?: unknown } } & Record<string, unknown>;

/** Centrifugo's error codes the client knows. */
export const ERRORS = {
  badRequest: { code: 107, message: "bad request" },
  unauthorized: { code: 101, message: "unauthorized" },
  permissionDenied: { code: 103, message: "permission denied" },
  tokenExpired: { code: 109, message: "token expired" },
} as const;

/** The commands of one frame; blank lines skipped, a line that is not a JSON object is a bad request. */
export function parseFrame(text: string): { ok: true; commands: Command[] } | { ok: false } {
  const commands: Command[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { ok: false };
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false };
    commands.push(value as Command);
  }
  return { ok: true, commands };
}

export const reply = (id: number | undefined, body: Record<string, unknown>) => JSON.stringify({ id, ...body });
export const errorReply = (id: number | undefined, error: { code: number; message: string }) => JSON.stringify({ id, error });
export const publication = (channel: string, data: unknown) => JSON.stringify({ push: { channel, pub: { data } } });

/** The channel runWorkflow listens on for one execution. */
export const channelOf = (executionId: number) => `workflow_updates:${executionId}`;

export function executionOfCapability(capability: string): number | null {
  const m = /^workflow_updates:([1-9][0-9]{0,15})$/.exec(capability);
  return m ? Number(m[1]) : null;
}

/**
 * The message that tells the SDK the run is over. Its outputs are not carried: the result code
 * sends the SDK to GET /workflow-version-execution-results, which answers them with the
 * return_all_outputs the caller chose (the channel cannot know it).
 */
export const RUN_DONE = { message_name: "SET_WORKFLOW_COMPLETE", data: JSON.stringify({ result_code: "EXCEEDS_SIZE_LIMIT" }) };

// ---- tokens --------------------------------------------------------------------------------------

export interface TokenClaims {
  workspaceId: number;
  executionId: number;
  /** Expiry, epoch ms. */
  exp: number;
}

const enc = new TextEncoder();
const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromB64url = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

async function hmacKey(secret: string): Promise<CryptoKey> {
  // Derived from the deployment's secret with its own label, so it signs nothing else.
  const raw = await crypto.subtle.digest("SHA-256", enc.encode(`realtime-token:${secret}`));
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

export async function signToken(secret: string, claims: TokenClaims): Promise<string> {
  const body = b64url(enc.encode(JSON.stringify([claims.workspaceId, claims.executionId, claims.exp])));
  const sig = new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), enc.encode(body)));
  return `${body}.${b64url(sig)}`;
}

/** The claims of a genuine token, "expired", or "invalid" (forged, altered, malformed). */
export async function verifyToken(secret: string, token: unknown, now: number): Promise<TokenClaims | "expired" | "invalid"> {
  if (typeof token !== "string" || token.length > 1000) return "invalid";
  const [body, sig, extra] = token.split(".");
  if (!body || !sig || extra !== undefined) return "invalid";
  try {
    const ok = await crypto.subtle.verify("HMAC", await hmacKey(secret), fromB64url(sig), enc.encode(body));
    if (!ok) return "invalid";
    const [workspaceId, executionId, exp] = JSON.parse(new TextDecoder().decode(fromB64url(body))) as number[];
    if (![workspaceId, executionId, exp].every(Number.isSafeInteger)) return "invalid";
    return exp < now ? "expired" : { workspaceId, executionId, exp };
  } catch {
    return "invalid";
  }
}
