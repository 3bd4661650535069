// The realtime protocol module: frames, replies and the tokens that admit a client to one channel.
import { describe, expect, it } from "vitest";
import { channelOf, channelOfCapability, completionMessage, FINAL_OUTPUT_MAX_BYTES, MAX_COMMANDS_PER_FRAME, MAX_FRAME_BYTES, parseCapability, parseFrame, publication, runChannelOf, signToken, verifyToken } from "../../src/realtime/protocol";

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

  it("takes at most MAX_COMMANDS_PER_FRAME commands and MAX_FRAME_BYTES in one frame", () => {
    const sub = (i: number) => JSON.stringify({ id: i, subscribe: { channel: "c" } });
    const at = Array.from({ length: MAX_COMMANDS_PER_FRAME }, (_, i) => sub(i)).join("\n");
    expect(parseFrame(at)).toMatchObject({ ok: true, commands: { length: MAX_COMMANDS_PER_FRAME } });
    expect(parseFrame(`${at}\n${sub(99)}`)).toEqual({ ok: false, reason: "too many commands in one frame" });
    // 3,000 subscribes in one frame, as the review sent: refused whole.
    expect(parseFrame(Array.from({ length: 3000 }, (_, i) => sub(i)).join("\n")).ok).toBe(false);
    const pad = (n: number) => JSON.stringify({ id: 1, x: "a".repeat(n - 15) });
    expect(pad(MAX_FRAME_BYTES).length).toBe(MAX_FRAME_BYTES);
    expect(parseFrame(pad(MAX_FRAME_BYTES)).ok).toBe(true);
    expect(parseFrame(pad(MAX_FRAME_BYTES + 1))).toEqual({ ok: false, reason: "frame too large" });
  });

  it("reads the two channel forms the SDKs ask for, and no other", () => {
    expect(channelOf(42)).toBe("workflow_updates:42");
    expect(runChannelOf(7, "ab12")).toBe("workflows:7:run:ab12");
    expect(parseCapability("workflow_updates:42")).toEqual({ kind: "execution", executionId: 42 });
    const suffix = "9f86d081884c7d659a2feaa0c55ad015";
    expect(parseCapability(`workflows:7:run:${suffix}`)).toEqual({ kind: "run", workflowId: 7, suffix });
    for (const c of ["workflow_updates:42", `workflows:7:run:${suffix}`, "workflows:7:run:A_b-9"]) expect(channelOfCapability(parseCapability(c)!)).toBe(c);
    for (const bad of [
      "workflow_updates:0", "workflow_updates:-1", "workflow_updates:x", "other:1", "workflow_updates:1:2", "",
      "workflows:0:run:ab", "workflows:x:run:ab", "workflows:7:run:", "workflows:7:run:a b", "workflows:7:run:a:b", `workflows:7:run:${"a".repeat(65)}`, "workflows:7:ab",
    ]) {
      expect(parseCapability(bad), bad).toBeNull();
    }
  });

  it("carries the outputs in the completion message up to its size limit, else sends the SDK to the results", () => {
    const small = completionMessage(5, { answer: { status: "SUCCESS", value: "hi" } });
    expect(small.message_name).toBe("SET_WORKFLOW_COMPLETE");
    expect(JSON.parse(small.data)).toEqual({ workflow_version_execution_id: 5, result_code: "OK", final_output: { answer: { status: "SUCCESS", value: "hi" } } });
    // A null output is an output (a main output node that answered null).
    expect(JSON.parse(completionMessage(5, null).data)).toMatchObject({ result_code: "OK", final_output: null });
    const exceeds = { workflow_version_execution_id: 5, result_code: "EXCEEDS_SIZE_LIMIT", final_output: null };
    expect(JSON.parse(completionMessage(5).data)).toEqual(exceeds);
    // Both sides of the limit: the whole data text counts, in UTF-8 bytes.
    const overhead = JSON.stringify({ workflow_version_execution_id: 5, result_code: "OK", final_output: "" }).length;
    expect(JSON.parse(completionMessage(5, "x".repeat(FINAL_OUTPUT_MAX_BYTES - overhead)).data).result_code).toBe("OK");
    expect(JSON.parse(completionMessage(5, "x".repeat(FINAL_OUTPUT_MAX_BYTES - overhead + 1)).data)).toEqual(exceeds);
    expect(JSON.parse(completionMessage(5, "é".repeat((FINAL_OUTPUT_MAX_BYTES - overhead) / 2 + 1)).data)).toEqual(exceeds);
    expect(JSON.parse(publication("c", small))).toEqual({ push: { channel: "c", pub: { data: small } } });
  });

  it("verifies its own tokens, and refuses expired, altered, foreign-key and malformed ones", async () => {
    const now = Date.now();
    const token = await signToken(SECRET, { workspaceId: 7, channel: "workflow_updates:9", exp: now + 1000, keyId: 5 });
    expect(await verifyToken(SECRET, token, now)).toEqual({ workspaceId: 7, channel: "workflow_updates:9", exp: now + 1000, keyId: 5 });
    const runToken = await signToken(SECRET, { workspaceId: 7, channel: "workflows:3:run:abc", exp: now + 1000, keyId: 5 });
    expect(await verifyToken(SECRET, runToken, now)).toEqual({ workspaceId: 7, channel: "workflows:3:run:abc", exp: now + 1000, keyId: 5 });
    // A genuine signature over a channel no SDK can ask for is still refused.
    expect(await verifyToken(SECRET, await signToken(SECRET, { workspaceId: 7, channel: "other:1", exp: now + 1000, keyId: 5 }), now)).toBe("invalid");
    expect(await verifyToken(SECRET, token, now + 1001)).toBe("expired");
    expect(await verifyToken("t".repeat(32), token, now)).toBe("invalid");
    const [body, sig] = token.split(".");
    const other = await signToken(SECRET, { workspaceId: 8, channel: "workflow_updates:9", exp: now + 1000, keyId: 5 });
    expect(await verifyToken(SECRET, `${other.split(".")[0]}.${sig}`, now)).toBe("invalid");
    for (const bad of [undefined, 42, "", "a.b", `${body}`, `${token}.x`, "x".repeat(2000)]) expect(await verifyToken(SECRET, bad, now)).toBe("invalid");
  });
});
