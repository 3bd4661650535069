// npm run dev's port: --port N and --port=N after `npm run dev --`, else PORT, else 8787; the flag is
// not passed on to wrangler (which would then see two ports).
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the repo's scripts
import { portAndRest } from "../../scripts/lib/dev-args.mjs";

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

  it("refuses a port that is not 1 to 65535", () => {
    for (const bad of ["0", "65536", "abc", "-1", ""]) expect(() => portAndRest(["--port", bad], undefined)).toThrow(/the port must be a number from 1 to 65535/);
    expect(portAndRest(["--port", "65535"], undefined).port).toBe("65535");
    expect(portAndRest(["--port", "1"], undefined).port).toBe("1");
  });
});
