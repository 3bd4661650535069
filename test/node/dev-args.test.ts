// npm run dev's port (--port N and --port=N after `npm run dev --`, else PORT, else 8787; the flag is
// not passed on to wrangler, which would then see two ports) and its cron (scripts/lib/dev-cron.mjs).
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the repo's scripts
import { portAndRest } from "../../scripts/lib/dev-args.mjs";
// @ts-expect-error: a plain ES module of the repo's scripts
import { startDevCron } from "../../scripts/lib/dev-cron.mjs";

describe("npm run dev's arguments", () => {
  it("takes the port from --port N, --port=N, then PORT, then 8787", () => {
    expect(portAndRest(["--port", "8811"], undefined)).toEqual({ port: "8811", rest: [] });
    expect(portAndRest(["--port=8812"], "9000")).toEqual({ port: "8812", rest: [] });
    expect(portAndRest([], "9000")).toEqual({ port: "9000", rest: [] });
    expect(portAndRest([], undefined)).toEqual({ port: "8787", rest: [] });
  });

  it("passes every other argument on to wrangler, in order", () => {
    expect(portAndRest(["--local", "--port", "8811", "--log-level", "debug"], undefined)).toEqual({ port: "8811", rest: ["--local", "--log-level", "debug"] });
  });

  it("passes --persist-to on to wrangler and names the state it chose", () => {
    expect(portAndRest(["--persist-to", "/tmp/s", "--port", "8811"], undefined)).toEqual({ port: "8811", rest: ["--persist-to", "/tmp/s"], persistTo: "/tmp/s" });
    expect(portAndRest(["--persist-to=/tmp/t"], undefined)).toEqual({ port: "8787", rest: ["--persist-to=/tmp/t"], persistTo: "/tmp/t" });
    expect(portAndRest(["--local"], undefined)).not.toHaveProperty("persistTo");
  });

  it("refuses a port that is not 1 to 65535", () => {
    for (const bad of ["0", "65536", "abc", "-1", ""]) expect(() => portAndRest(["--port", bad], undefined)).toThrow(/the port must be a number from 1 to 65535/);
    expect(portAndRest(["--port", "65535"], undefined).port).toBe("65535");
    expect(portAndRest(["--port", "1"], undefined).port).toBe("1");
  });
});

describe("npm run dev's cron", () => {
  it("calls the scheduled handler with the cron expression every interval, says so once, and reports a failure once until it recovers", async () => {
    const calls: string[] = [];
    const lines: string[] = [];
    const answers = [200, 200, 500, 500, 200];
    const fetchImpl = async (url: string) => {
      calls.push(url);
      return new Response("", { status: answers[calls.length - 1] ?? 200 });
    };
    const stop = startDevCron({ base: "http://127.0.0.1:1", everyMs: 20, aligned: false, fetchImpl, log: (l: string) => lines.push(l) });
    // However slow the machine, five calls come (no wall-clock count is asserted).
    for (let i = 0; i < 600 && calls.length < 5; i++) await new Promise((r) => setTimeout(r, 50));
    stop();
    const seen = calls.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(calls.length).toBe(seen);
    expect(seen).toBeGreaterThanOrEqual(5);
    expect(calls[0]).toBe("http://127.0.0.1:1/__scheduled?cron=*%20*%20*%20*%20*");
    expect(lines.filter((l) => l.includes("ran"))).toHaveLength(1);
    expect(lines.filter((l) => l.includes("failed"))).toEqual(["  Cron: the scheduled handler failed (it answered 500); trying again in a minute"]);
  });

  it("waits for the next minute's start, as a cron trigger fires", async () => {
    let calls = 0;
    // 10 ms before a minute starts: the first call comes after those 10 ms, the next a whole minute later.
    let clock = 59_990;
    const fetchImpl = async () => {
      calls++;
      clock = 60_005;
      return new Response("");
    };
    const stop = startDevCron({ base: "http://x", fetchImpl, log: () => {}, now: () => clock });
    for (let i = 0; i < 200 && calls === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    stop();
    expect(calls).toBe(1);
  });
});
