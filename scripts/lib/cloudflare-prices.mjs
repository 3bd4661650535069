// Cloudflare's list prices, the one table bench:cost prices a month from (Workers Paid, Standard usage
// model, USD). Read on 2026-11-28 from stored copies of Cloudflare's documentation sources
// (the cloudflare/cloudflare-docs repository, production branch): check them against
// developers.cloudflare.com before relying on a sum, and change them here only, with the date.
export const PRICES = {
  read: "2026-11-28",
  sources: {
    workers: "cloudflare/cloudflare-docs src/content/docs/workers/platform/pricing.mdx (developers.cloudflare.com/workers/platform/pricing/)",
    d1: "cloudflare/cloudflare-docs src/content/partials/workers/d1-pricing.mdx (developers.cloudflare.com/d1/platform/pricing/)",
    r2: "cloudflare/cloudflare-docs src/content/docs/r2/pricing.mdx (developers.cloudflare.com/r2/pricing/)",
    queues: "cloudflare/cloudflare-docs src/content/partials/workers/queues_pricing.mdx (developers.cloudflare.com/queues/platform/pricing/)",
  },
  workers: {
    plan_per_month: 5,
    requests_included: 10_000_000,
    per_million_requests: 0.3,
    cpu_ms_included: 30_000_000,
    per_million_cpu_ms: 0.02,
  },
  d1: {
    rows_read_included: 25_000_000_000,
    per_million_rows_read: 0.001,
    rows_written_included: 50_000_000,
    per_million_rows_written: 1.0,
    storage_gb_included: 5,
    per_gb_month: 0.75,
  },
  r2: {
    storage_gb_month_included: 10,
    per_gb_month: 0.015,
    class_a_included: 1_000_000,
    per_million_class_a: 4.5,
    class_b_included: 10_000_000,
    per_million_class_b: 0.36,
  },
  queues: {
    operations_included: 1_000_000,
    per_million_operations: 0.4,
    /** A delivered message of at most 64 KB: one write, one read, one delete. */
    operations_per_message: 3,
  },
};

const over = (used, included) => Math.max(0, used - included);

/**
 * The bill of one month (30 days) for a team logging `perDay` calls a day with logs kept in D1 for
 * `retentionDays` (null: never archived), taken in the month that ends on `day` (storage at its size
 * that day: an upper bound for the month), from what one log costs (`perLog`, measured by bench:cost):
 *   rowsWritten, rowsRead                 D1, its write and indexing
 *   archiveRowsWritten, archiveRowsRead   D1, moving it to R2 (the archive job)
 *   d1Bytes, r2Bytes                      at rest
 *   cpuMs                                 the Worker's CPU (its write, indexing and archiving)
 *   queueMessages                         messages on the index queue
 *   consumerInvocations                   index-queue consumer invocations (each a Worker request)
 *   logsPerArchiveFile                    logs an R2 object holds
 *   liveDaysPastWindow                    whole days the archive keeps live past the window
 * Returns each line and the total, in USD.
 */
export function monthlyBill({ perDay, retentionDays, day = 90 }, perLog, prices = PRICES) {
  const month = 30;
  const written = perDay * month;
  const live = retentionDays === null ? perDay * day : perDay * Math.min(day, retentionDays + perLog.liveDaysPastWindow);
  const archivedByDay = retentionDays === null ? 0 : Math.max(0, perDay * day - live);
  const archivedInMonth = retentionDays === null ? 0 : Math.min(written, archivedByDay);
  const gb = (bytes) => bytes / 1e9;
  const w = prices.workers;
  const d = prices.d1;
  const r = prices.r2;
  const q = prices.queues;
  // The log requests, the index consumer's invocations and the cron's runs (one a minute) are requests.
  const requests = written * (1 + perLog.consumerInvocations) + month * 24 * 60;
  const lines = {
    workers_plan: w.plan_per_month,
    workers_requests: (over(requests, w.requests_included) / 1e6) * w.per_million_requests,
    workers_cpu: (over(written * perLog.cpuMs, w.cpu_ms_included) / 1e6) * w.per_million_cpu_ms,
    queues: (over(written * perLog.queueMessages * q.operations_per_message, q.operations_included) / 1e6) * q.per_million_operations,
    d1_rows_written: (over(written * perLog.rowsWritten + archivedInMonth * perLog.archiveRowsWritten, d.rows_written_included) / 1e6) * d.per_million_rows_written,
    d1_rows_read: (over(written * perLog.rowsRead + archivedInMonth * perLog.archiveRowsRead, d.rows_read_included) / 1e6) * d.per_million_rows_read,
    d1_storage: over(gb(live * perLog.d1Bytes), d.storage_gb_included) * d.per_gb_month,
    r2_storage: over(gb(archivedByDay * perLog.r2Bytes), r.storage_gb_month_included) * r.per_gb_month,
    r2_writes: (over(archivedInMonth / perLog.logsPerArchiveFile, r.class_a_included) / 1e6) * r.per_million_class_a,
  };
  const total = Object.values(lines).reduce((a, b) => a + b, 0);
  return { lines, total, live_logs: live, archived_logs: archivedByDay, d1_gb: gb(live * perLog.d1Bytes), r2_gb: gb(archivedByDay * perLog.r2Bytes) };
}
