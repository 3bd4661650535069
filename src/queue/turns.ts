// Serving workspaces' jobs in turn on the JOBS queue, which every workspace shares. Two rules:
//  1. Slices: a long job (an import, a dataset fill, an evaluation run, a workflow run) works one slice
//     per delivery, about JOB_SLICE_MS, then queues its continuation at the back of the queue (each
//     kind resumes from what it committed), so no delivery holds the consumer for a whole job.
//  2. Turns: a batch takes its messages with the workspaces in turn (each one's first, then each one's
//     second…), and a workspace whose messages have used JOB_SLICE_MS of this batch gets no more of it:
//     its other messages go back to the end of the queue (sent again, not retried: their attempts stay).
// So a workspace's job queued behind another workspace's many or long jobs waits for at most one slice
// of each workspace ahead of it in its batch, not for their jobs to finish.

/** A delivery's slice and a workspace's turn per batch, when JOB_SLICE_MS is unset. */
export const DEFAULT_JOB_SLICE_MS = 10_000;

/**
 * JOB_SLICE_MS read: a whole number of ms. 0 is allowed: every delivery makes one step, and a batch
 * serves one message per workspace (what the fairness test uses to count turns instead of time).
 */
export function jobSliceMs(value: string | undefined): number {
  const n = Number(value);
  return value !== undefined && value.trim() !== "" && Number.isInteger(n) && n >= 0 ? n : DEFAULT_JOB_SLICE_MS;
}

/**
 * The messages of a batch with the workspaces taking turns: each workspace's first message, then each
 * one's second, and so on (in order of first appearance; a workspace's own messages keep their order).
 */
export function inTurn<T>(items: readonly T[], workspaceOf: (item: T) => number | null): T[] {
  const queues = new Map<number | null, T[]>();
  for (const item of items) {
    const ws = workspaceOf(item);
    const q = queues.get(ws);
    if (q) q.push(item);
    else queues.set(ws, [item]);
  }
  const out: T[] = [];
  for (let round = 0; out.length < items.length; round++) {
    for (const q of queues.values()) if (round < q.length) out.push(q[round]);
  }
  return out;
}

/** The time each workspace's messages took in one batch, against its turn. */
export class Turns {
  private readonly used = new Map<number, number>();

  constructor(private readonly turnMs: number) {}

  /** Whether the workspace may have another message served in this batch (its first always is). */
  open(workspaceId: number): boolean {
    const used = this.used.get(workspaceId);
    return used === undefined || used < this.turnMs;
  }

  spend(workspaceId: number, ms: number): void {
    this.used.set(workspaceId, (this.used.get(workspaceId) ?? 0) + Math.max(0, ms));
  }
}
