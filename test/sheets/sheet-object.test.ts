import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

/** bumpVersion is protected (only the object's own mutations call it); tests reach it from inside. */
type Bumpable = { bumpVersion(): number };
const bump = (stub: DurableObjectStub) => runInDurableObject(stub, (obj) => (obj as unknown as Bumpable).bumpVersion());
const sheet = (name: string) => env.SHEETS.get(env.SHEETS.idFromName(`${name}-${crypto.randomUUID()}`));

describe("SheetObject", () => {
  it("is a SQLite-backed object per sheet whose version starts at 0 and only grows", async () => {
    const stub = sheet("sheet");
    expect(await stub.version()).toBe(0);
    expect(await bump(stub)).toBe(1);
    expect(await bump(stub)).toBe(2);
    expect(await stub.version()).toBe(2);
  });

  it("keeps each sheet's state apart", async () => {
    const a = sheet("a");
    const b = sheet("b");
    await bump(a);
    expect(await a.version()).toBe(1);
    expect(await b.version()).toBe(0);
  });
});
