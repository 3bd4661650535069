// The log store's side of redaction: every way a log, span or OTLP log record comes in passes here
// before its row is built (write.ts, spans.ts, log-records.ts, tracking.ts), so nothing unredacted
// reaches a database, and from there the archive, an export, the full-text index, suggestions or a
// queue message. The policy comes with the caller's key (AuthContext.redaction): a workspace without
// one pays nothing. A policy is compiled once per isolate and version, and reused for every log.
import type { AuthContext } from "../lib/auth-context";
import { compilePolicy, readStoredPolicy, Redaction, redactBlueprint, redactLogContent, redactMap, redactRecordContent, redactSpanContent, type CompiledPolicy, type FieldGroup, type LogContent } from "../redaction";

/** Compiled policies by workspace, each with the version (updated_at) it was compiled from. */
const compiled = new Map<number, { updatedAt: number; policy: CompiledPolicy | null }>();
const MAX_COMPILED = 1000;

/** A fresh redaction (its own counts) under the caller's workspace policy; null when the workspace has none. */
export function redactionOf(auth: Pick<AuthContext, "workspaceId" | "redaction">): Redaction | null {
  const stored = auth.redaction;
  if (!stored) return null;
  let hit = compiled.get(auth.workspaceId);
  if (!hit || hit.updatedAt !== stored.updatedAt) {
    const policy = readStoredPolicy(stored.policy);
    hit = { updatedAt: stored.updatedAt, policy: policy ? compilePolicy(policy) : null };
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(auth.workspaceId, hit);
  }
  return hit.policy ? new Redaction(hit.policy) : null;
}

/** A log's content redacted, with its counts (null when nothing was found or there is no policy). */
export async function redactLog<T extends LogContent>(auth: Pick<AuthContext, "workspaceId" | "redaction">, log: T): Promise<T & { redactions: Record<string, number> | null }> {
  const r = redactionOf(auth);
  if (!r) return { ...log, redactions: null };
  const out = await redactLogContent(r, log);
  return { ...out, redactions: r.summary() };
}

/** A span's attributes, events and status redacted (its counts are its log's business, not kept). */
export async function redactSpan<T extends Parameters<typeof redactSpanContent>[1]>(auth: Pick<AuthContext, "workspaceId" | "redaction">, span: T): Promise<T> {
  const r = redactionOf(auth);
  return r ? redactSpanContent(r, span) : span;
}

/** An OTLP log record's body and attributes redacted, with what it redacted (added to its span's log when it joins it). */
export async function redactRecord<T extends Parameters<typeof redactRecordContent>[1]>(
  auth: Pick<AuthContext, "workspaceId" | "redaction">,
  record: T,
): Promise<{ record: T; redactions: Record<string, number> | null }> {
  const r = redactionOf(auth);
  if (!r) return { record, redactions: null };
  return { record: await redactRecordContent(r, record), redactions: r.summary() };
}

/** Counts added up (null when both are null). */
export function addCounts(...all: (Record<string, number> | null | undefined)[]): Record<string, number> | null {
  const out: Record<string, number> = {};
  for (const counts of all) for (const [k, n] of Object.entries(counts ?? {})) out[k] = (out[k] ?? 0) + n;
  return Object.keys(out).length > 0 ? out : null;
}

/** A map added to a stored log (tracked metadata, input variables), with what it redacted. */
export async function redactAddedMap<T extends Record<string, unknown>>(
  auth: Pick<AuthContext, "workspaceId" | "redaction">,
  map: T,
  group: FieldGroup,
): Promise<{ value: T; redactions: Record<string, number> | null }> {
  const r = redactionOf(auth);
  if (!r) return { value: map, redactions: null };
  return { value: await redactMap(r, map, group), redactions: r.summary() };
}

/**
 * A log's input and output rebuilt from its span's GenAI log records, redacted as a log's are
 * (`messages`, `outputs`, `tool_calls`): the records were redacted only as log bodies when they came.
 * With what it redacted (null when nothing, or no policy).
 */
export async function redactJoinedContent<T extends { input: Record<string, unknown>; output: Record<string, unknown> }>(
  auth: Pick<AuthContext, "workspaceId" | "redaction">,
  content: T,
): Promise<{ content: T; redactions: Record<string, number> | null }> {
  const r = redactionOf(auth);
  if (!r) return { content, redactions: null };
  return { content: { ...content, input: await redactBlueprint(r, content.input, "messages"), output: await redactBlueprint(r, content.output, "outputs") }, redactions: r.summary() };
}
