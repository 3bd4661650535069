import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import { ApiError } from "../../src/lib/errors";
import { enforceRateLimit, rateLimitByKey, SUGGESTIONS_RATE_LIMIT } from "../../src/http/rate-limit";
import type { AppEnv } from "../../src/env";
import { createExecutionContext } from "cloudflare:test";
import { createApp } from "../../src/app";
import { defineRoute } from "../../src/http/openapi";
import { withinOneWindow } from "../helpers/rate-limit";

describe("the suggestions rate limit binding", () => {
  it("lets 10 calls a minute through per key and refuses the 11th with 429 and Retry-After", async () => {
    const key = `k-${crypto.randomUUID()}`;
    await withinOneWindow();
    for (let i = 0; i < 10; i++) await enforceRateLimit(env.SUGGESTIONS_LIMITER, key, SUGGESTIONS_RATE_LIMIT);
    const err = await enforceRateLimit(env.SUGGESTIONS_LIMITER, key, SUGGESTIONS_RATE_LIMIT).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(429);
    expect(err.code).toBe("rate_limited");
    expect(err.headers).toEqual({ "Retry-After": "60" });
    // Another key has its own budget.
    await expect(enforceRateLimit(env.SUGGESTIONS_LIMITER, `${key}-other`, SUGGESTIONS_RATE_LIMIT)).resolves.toBeUndefined();
  });

  it("as middleware, counts per presented key before any handler runs", async () => {
    let reached = 0;
    const app = new Hono<AppEnv>();
    app.onError((e, c) => c.json({ code: (e as ApiError).code }, (e as ApiError).status as 429));
    app.get("/x", rateLimitByKey(SUGGESTIONS_RATE_LIMIT), (c) => {
      reached++;
      return c.text("ok");
    });
    const key = `mw-${crypto.randomUUID()}`;
    const statuses: number[] = [];
    await withinOneWindow();
    for (let i = 0; i < 11; i++) statuses.push((await app.request("/x", { headers: { "X-API-KEY": key } }, env)).status);
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    expect(reached).toBe(10);
  });
});

describe("defineRoute({ rateLimit })", () => {
  it("counts before auth: even calls with an unknown key use up the budget, and no handler runs", async () => {
    const app = createApp();
    let reached = 0;
    app.openapi(
      defineRoute({ method: "get", path: "/limited", scope: "read", rateLimit: SUGGESTIONS_RATE_LIMIT, responses: { 200: { description: "ok" } } }),
      (c) => {
        reached++;
        return c.text("ok");
      },
    );
    const key = `pe_unknown_${crypto.randomUUID()}`;
    const statuses: number[] = [];
    let last: Response | undefined;
    await withinOneWindow();
    for (let i = 0; i < 11; i++) {
      last = await app.fetch(new Request("http://api.test/limited", { headers: { "X-API-KEY": key } }), env, createExecutionContext());
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    expect(last!.headers.get("Retry-After")).toBe("60");
    expect(await last!.json()).toMatchObject({ success: false, error: "rate_limited" });
    expect(reached).toBe(0);
  });
});
