// Database drivers wrap errors (drizzle: "Failed query: … params: …" with the D1 error as `cause`).
// These helpers read the whole chain, and shorten it for logs so no payload is written out.

export function errorChain(err: unknown): string[] {
  const out: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur != null && depth < 8; depth++) {
    out.push(cur instanceof Error ? cur.message : String(cur));
    cur = cur instanceof Error ? (cur as Error & { cause?: unknown }).cause : undefined;
  }
  return out;
}

/** Whether any error in the chain says `needle` (e.g. a trigger's RAISE message). */
export function chainIncludes(err: unknown, needle: string | RegExp): boolean {
  return errorChain(err).some((m) => (typeof needle === "string" ? m.includes(needle) : needle.test(m)));
}

/** The chain for a log line: each message cut to `max` characters, query parameters dropped. */
export function chainForLog(err: unknown, max = 300): string[] {
  return errorChain(err).map((m) => {
    const withoutParams = m.replace(/\bparams:[\s\S]*$/, "params: [omitted]");
    return withoutParams.length > max ? `${withoutParams.slice(0, max)}…` : withoutParams;
  });
}
