import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError } from "../../src/lib/errors";
import { validationError, validationHook } from "../../src/lib/validation";

describe("the validation hook", () => {
  it("names the field and the rule", () => {
    const schema = z.object({ score: z.int().max(100, "must be from 0 to 100"), tags: z.array(z.string().max(2, "too long")) });
    const r = schema.safeParse({ score: 101, tags: ["ok", "long"] });
    const err = validationError(r.error!.issues, { data: { score: 101, tags: ["ok", "long"] } });
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.code).toBe("validation_error");
    expect(err.message).toBe("score: must be from 0 to 100; tags[1]: too long");
    expect(err.details).toEqual([
      { field: "score", rule: "must be from 0 to 100" },
      { field: "tags[1]", rule: "too long" },
    ]);
  });

  it("says a missing field is required and lists at most five issues", () => {
    const schema = z.object(Object.fromEntries(["a", "b", "c", "d", "e", "f", "g"].map((k) => [k, z.string()])));
    const err = validationError(schema.safeParse({}).error!.issues, { data: {} });
    expect(err.message).toMatch(/^a: is required; b: is required; .*; and 2 more$/);
    expect(err.details).toHaveLength(7);
  });

  it("throws on failure and passes on success", () => {
    expect(() => validationHook({ success: true })).not.toThrow();
    const error = z.string().safeParse(1).error;
    expect(() => validationHook({ success: false, error, target: "query" })).toThrow(ApiError);
  });
});
