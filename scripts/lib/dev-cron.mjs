// npm run dev's cron: wrangler dev never fires the Worker's cron trigger by itself (plain `wrangler dev`
// says so: "Scheduled Workers are not automatically triggered during local development"), so the
// sweeps, archiving and retention of src/queue/scheduled.ts would never run locally. This calls the
// scheduled handler as production's trigger does, every minute on the minute, through the path
// `wrangler dev --test-scheduled` serves for it. (The path that warning suggests,
// /cdn-cgi/handler/scheduled, fails for this Worker in wrangler 4.86: a Worker with static assets is
// reached through the assets router, which cannot pass a ScheduledController on: DataCloneError.)

export const SCHEDULED_PATH = "/__scheduled";

/**
 * Calls `base`'s scheduled handler with `cron` every `everyMs` (by default on each minute's start),
 * and says so once when the first call answers; a failure is reported (once until the next success).
 * Answers a function that stops it.
 */
export function startDevCron({ base, cron = "* * * * *", everyMs = 60_000, aligned = true, fetchImpl = fetch, log = console.log, now = Date.now }) {
  let timer = null;
  let stopped = false;
  let ranOnce = false;
  let failing = false;
  const url = `${base}${SCHEDULED_PATH}?cron=${encodeURIComponent(cron)}`;
  const tick = async () => {
    try {
      const res = await fetchImpl(url);
      await res.text();
      if (!res.ok) throw new Error(`it answered ${res.status}`);
      if (!ranOnce) log(`  Cron: the scheduled handler ran (and runs every minute while npm run dev is up: ${SCHEDULED_PATH})`);
      ranOnce = true;
      failing = false;
    } catch (err) {
      if (!failing) log(`  Cron: the scheduled handler failed (${err?.message ?? err}); trying again in a minute`);
      failing = true;
    }
    schedule();
  };
  const schedule = () => {
    if (stopped) return;
    const wait = aligned ? everyMs - (now() % everyMs) : everyMs;
    timer = setTimeout(tick, wait);
    timer.unref?.();
  };
  schedule();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
