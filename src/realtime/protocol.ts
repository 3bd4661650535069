// The subset of Centrifugo's JSON protocol (client protocol v2) the promptlayer SDKs' runWorkflow /
// run_workflow use, the channels they listen on, the message that ends a run, and the tokens that
// admit a client to one channel. Pure: no bindings.
//
// Client → server: frames of newline-separated commands {id, connect|subscribe|unsubscribe}.
// Server → client: replies {id, connect|subscribe|unsubscribe|error} and pushes {push: {channel, pub: {data}}}.
// No pings are announced in the connect reply, so the client expects none.

export type Command = { id?: number; connect?: { token?: unknown }; subscribe?: { channel?: unknown }; unsubscribe?: { channel?: unknown } } & Record<string, unknown>;

/** The name of the object a channel's connections are placed on: one per channel of one workspace. */
export const hubName = (workspaceId: number, channel: string) => `${workspaceId}:${channel}`;

/** Centrifugo's error codes the client knows. */
export const ERRORS = {
  badRequest: { code: 107, message: "bad request" },
  unauthorized: { code: 101, message: "unauthorized" },
  permissionDenied: { code: 103, message: "permission denied" },
  tokenExpired: { code: 109, message: "token expired" },
} as const;

/** The most commands one frame may carry (the SDKs send one or two); more closes the connection. */
export const MAX_COMMANDS_PER_FRAME = 16;
/** The largest frame read, in bytes of UTF-8 (the SDKs' are a few hundred); larger closes the connection. */
export const MAX_FRAME_BYTES = 16 * 1024;

/**
 * The commands of one frame; blank lines skipped. A line that is not a JSON object, more than
 * MAX_COMMANDS_PER_FRAME commands or more than MAX_FRAME_BYTES is a bad request.
 */
export function parseFrame(text: string): { ok: true; commands: Command[] } | { ok: false; reason: string } {
  if (text.length > MAX_FRAME_BYTES || new TextEncoder().encode(text).length > MAX_FRAME_BYTES) return { ok: false, reason: "frame too large" };
  const commands: Command[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    if (commands.length >= MAX_COMMANDS_PER_FRAME) return { ok: false, reason: "too many commands in one frame" };
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { ok: false, reason: "bad request" };
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, reason: "bad request" };
    commands.push(value as Command);
  }
  return { ok: true, commands };
}

export const reply = (id: number | undefined, body: Record<string, unknown>) => JSON.stringify({ id, ...body });
export const errorReply = (id: number | undefined, error: { code: number; message: string }) => JSON.stringify({ id, error });
export const publication = (channel: string, data: unknown) => JSON.stringify({ push: { channel, pub: { data } } });

/** The channel the JavaScript SDK's runWorkflow listens on, named after the run it started. */
export const channelOf = (executionId: number) => `workflow_updates:${executionId}`;

/** The channel the Python SDK's run_workflow listens on: named before the run, which is then told the suffix. */
export const runChannelOf = (workflowId: number, suffix: string) => `workflows:${workflowId}:run:${suffix}`;

/** A run's channel_name_suffix: what the Python SDK sends (32 hex digits), or any other short id. */
export const CHANNEL_SUFFIX = /^[A-Za-z0-9_-]{1,64}$/;

export type Capability = { kind: "execution"; executionId: number } | { kind: "run"; workflowId: number; suffix: string };

/** The channel a token is asked for: `workflow_updates:<execution id>` or `workflows:<workflow id>:run:<suffix>`. */
export function parseCapability(capability: string): Capability | null {
  const execution = /^workflow_updates:([1-9][0-9]{0,15})$/.exec(capability);
  if (execution) return { kind: "execution", executionId: Number(execution[1]) };
  const run = /^workflows:([1-9][0-9]{0,15}):run:(.+)$/.exec(capability);
  if (run && CHANNEL_SUFFIX.test(run[2])) return { kind: "run", workflowId: Number(run[1]), suffix: run[2] };
  return null;
}

export const channelOfCapability = (c: Capability) => (c.kind === "execution" ? channelOf(c.executionId) : runChannelOf(c.workflowId, c.suffix));

/**
 * The largest `data` a completion message carries the outputs in; larger outputs are fetched by the
 * SDK from GET /workflow-version-execution-results (result code EXCEEDS_SIZE_LIMIT), as PromptLayer's
 * own realtime service limits its messages.
 */
export const FINAL_OUTPUT_MAX_BYTES = 64 * 1024;

export interface CompletionMessage {
  message_name: "SET_WORKFLOW_COMPLETE";
  /** JSON text: {workflow_version_execution_id, result_code, final_output}. */
  data: string;
}

/** A run's end, told to one channel (a run has its execution's channel, and the Python SDK's when it named one). */
export interface ChannelMessage {
  channel: string;
  message: CompletionMessage;
}

/**
 * The message that tells an SDK its run is over. With the outputs (the shape the run's
 * return_all_outputs asked for) when they fit FINAL_OUTPUT_MAX_BYTES; without them (undefined: not
 * known here, or too large) result code EXCEEDS_SIZE_LIMIT sends the SDK to the results endpoint.
 */
export function completionMessage(executionId: number, finalOutput?: unknown): CompletionMessage {
  if (finalOutput !== undefined) {
    const data = JSON.stringify({ workflow_version_execution_id: executionId, result_code: "OK", final_output: finalOutput });
    if (new TextEncoder().encode(data).length <= FINAL_OUTPUT_MAX_BYTES) return { message_name: "SET_WORKFLOW_COMPLETE", data };
  }
  return { message_name: "SET_WORKFLOW_COMPLETE", data: JSON.stringify({ workflow_version_execution_id: executionId, result_code: "EXCEEDS_SIZE_LIMIT", final_output: null }) };
}

// ---- tokens --------------------------------------------------------------------------------------

export interface TokenClaims {
  workspaceId: number;
  /** The one channel the token admits. */
  channel: string;
  /** Expiry, epoch ms. */
  exp: number;
  /** The API key that asked for the token: once it is revoked, the token admits nothing. */
  keyId: number;
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
  const body = b64url(enc.encode(JSON.stringify([claims.workspaceId, claims.channel, claims.exp, claims.keyId])));
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
    const [workspaceId, channel, exp, keyId] = JSON.parse(new TextDecoder().decode(fromB64url(body))) as [number, string, number, number];
    if (![workspaceId, exp, keyId].every(Number.isSafeInteger) || typeof channel !== "string" || parseCapability(channel) === null) return "invalid";
    return exp < now ? "expired" : { workspaceId, channel, exp, keyId };
  } catch {
    return "invalid";
  }
}
