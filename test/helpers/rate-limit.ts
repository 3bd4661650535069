// The Rate Limiting binding counts in fixed windows aligned to the epoch (a minute starts at each whole
// 60 s): calls that must fall in one window wait for a new one when the current one is nearly over,
// or a busy machine could spread them over two windows and the last call would not be refused.

/** Resolves at once when `needSeconds` remain in the current window of `periodSeconds`, else at the start of the next. */
export async function withinOneWindow(periodSeconds = 60, needSeconds = 15): Promise<void> {
  const periodMs = periodSeconds * 1000;
  const left = periodMs - (Date.now() % periodMs);
  if (left < needSeconds * 1000) await new Promise((r) => setTimeout(r, left + 100));
}
