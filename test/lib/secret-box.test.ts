// AES-GCM sealing of secrets: round trip, fresh IVs, bound to its row, refused without a key.
import { describe, expect, it } from "vitest";
import { open, seal } from "../../src/lib/secret-box";
import { ApiError } from "../../src/lib/errors";

const KEY = "k".repeat(32);

describe("secret box", () => {
  it("round-trips any text, with a fresh IV each time", async () => {
    const text = "sk-éß😀\u0000end";
    const a = await seal(KEY, text, "ctx");
    const b = await seal(KEY, text, "ctx");
    expect(a).not.toBe(b);
    expect(await open(KEY, a, "ctx")).toBe(text);
    expect(await open(KEY, await seal(KEY, "", "ctx"), "ctx")).toBe("");
  });

  it("does not open with another context or key", async () => {
    const sealed = await seal(KEY, "secret", "env:1:0:A");
    await expect(open(KEY, sealed, "env:2:0:A")).rejects.toThrow();
    await expect(open("j".repeat(32), sealed, "env:1:0:A")).rejects.toThrow();
  });

  it("refuses to work without a key of 32 characters or more", async () => {
    await expect(seal(undefined, "x", "c")).rejects.toBeInstanceOf(ApiError);
    await expect(seal("short", "x", "c")).rejects.toThrow(/ENV_VARS_KEY/);
    await expect(seal("k".repeat(31), "x", "c")).rejects.toThrow(/ENV_VARS_KEY/);
    expect(await seal("k".repeat(32), "x", "c")).toMatch(/^v1:/);
  });
});
