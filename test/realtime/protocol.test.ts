// The realtime protocol module: frames, replies and the tokens that admit a client to one channel.
import { describe, expect, it } from "vitest";
import { channelOf, executionOfCapability, parseFrame, publication, RUN_DONE, signToken, verifyToken } from "../../src/realtime/protocol";

const SECRET = "s".repeat(32);

describe("realtime protocol", () => {
  it("reads newline-separated commands and refuses what is not JSON objects", () => {
    expect(parseFrame('{"id":1,"connect":{"token":"t"}}\n{"id":2,"subscribe":{"channel":"c"}}\n')).toEqual({
      ok: true,
      commands: [{ id: 1, connect: { token: "t" } }, { id: 2, subscribe: { channel: "c" } }],
    });
    expect(parseFrame("{}")).toEqual({ ok: true, commands: [{}] });
    expect(parseFrame("not json").ok).toBe(false);
    expect(parseFrame("[1]").ok).toBe(false);
  });

  it("names one channel per execution, and reads only that form of capability", () => {
    expect(channelOf(42)).toBe("workflow_updates:42");
    expect(executionOfCapability("workflow_updates:42")).toBe(42);
    for (const bad of ["workflow_updates:0", "workflow_updates:-1", "workflow_updates:x", "other:1", "workflow_updates:1:2", ""]) expect(executionOfCapability(bad), bad).toBeNull();
    expect(JSON.parse(publication("c", RUN_DONE))).toEqual({ push: { channel: "c", pub: { data: { message_name: "SET_WORKFLOW_COMPLETE", data: '{"result_code":"EXCEEDS_SIZE_LIMIT"}' } } } });
  });

  it("verifies its own tokens, and refuses expired, altered, foreign-key and malformed ones", async () => {
    const now = Date.now();
    const token = await signToken(SECRET, { workspaceId: 7, executionId: 9, exp: now + 1000 });
    expect(await verifyToken(SECRET, token, now)).toEqual({ workspaceId: 7, executionId: 9, exp: now + 1000 });
    expect(await verifyToken(SECRET, token, now + 1001)).toBe("expired");
    expect(await verifyToken("t".repeat(32), token, now)).toBe("invalid");
    const [body, sig] = token.split(".");
    const other = await signToken(SECRET, { workspaceId: 8, executionId: 9, exp: now + 1000 });
    expect(await verifyToken(SECRET, `${other.split(".")[0]}.${sig}`, now)).toBe("invalid");
    for (const bad of [undefined, 42, "", "a.b", `${body}`, `${token}.x`, "x".repeat(2000)]) expect(await verifyToken(SECRET, bad, now)).toBe("invalid");
  });
});
