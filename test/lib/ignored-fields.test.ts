// The body fields a route's schema ignores, read off the schema itself (src/lib/ignored-fields.ts).
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ignoredFields, MAX_IGNORED_FIELDS } from "../../src/lib/ignored-fields";

const Message = z.object({ role: z.string(), content: z.array(z.looseObject({ type: z.string() })).nullish() });
const Body = z
  .object({
    name: z.string(),
    tags: z.array(z.string()).default([]),
    metadata: z.record(z.string(), z.string()).nullish(),
    extra: z.unknown().optional(),
    input: z.union([z.object({ type: z.literal("chat"), messages: z.array(Message) }), z.object({ type: z.literal("completion"), content: z.string() })]),
    move: z.object({ old_path: z.string().optional(), from: z.string().optional() }).transform((m) => ({ from: m.old_path ?? m.from })).optional(),
    loose: z.looseObject({ a: z.object({ b: z.number() }).optional() }).optional(),
  })
  .superRefine(() => {});

describe("ignoredFields", () => {
  it("names the keys a stripping object drops, with their paths, and nothing the schema reads", () => {
    const body = {
      name: "n",
      group_id: 5,
      tags: ["x"],
      metadata: { anything: "goes" },
      extra: { deep: { any: 1 } },
      input: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "kept: loose" }], name: "dropped" }] },
      move: { old_path: "a" },
      loose: { kept: 1, a: { b: 1, c: 2 } },
    };
    expect(ignoredFields(Body, body)).toEqual(["group_id", "input.messages[0].name", "loose.a.c"]);
  });
  it("reads a union by the option that fits the value best", () => {
    expect(ignoredFields(Body, { name: "n", input: { type: "completion", content: "c", stray: true } })).toEqual(["input.stray"]);
  });
  it("names nothing for a body the schema reads whole, or a value that is not an object", () => {
    expect(ignoredFields(Body, { name: "n", input: { type: "completion", content: "c" } })).toEqual([]);
    expect(ignoredFields(Body, "text")).toEqual([]);
    expect(ignoredFields(z.preprocess((v) => v, z.object({ a: z.number() })), { a: 1, b: 2 })).toEqual([]);
  });
  it("caps the list, and encodes keys a header cannot carry", () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]));
    const got = ignoredFields(z.object({}), many);
    expect(got).toHaveLength(MAX_IGNORED_FIELDS + 1);
    expect(got.at(-1)).toBe("...");
    expect(ignoredFields(z.object({}), { "é, x.y": 1 })).toEqual(["%C3%A9%2C%20x%2Ey"]);
  });
});
