import { describe, expect, it } from "vitest";
import { parseTimestamp, toIso } from "../../src/lib/time";

const ms = (v: unknown) => {
  const r = parseTimestamp(v);
  if (!r.ok) throw new Error(r.reason);
  return r.ms;
};
const base = Date.UTC(2024, 0, 15, 10, 30, 0);

describe("parseTimestamp", () => {
  it("reads ISO 8601 with Z, with an offset, and without a zone as UTC", () => {
    expect(ms("2024-01-15T10:30:00Z")).toBe(base);
    expect(ms("2024-01-15T12:30:00+02:00")).toBe(base);
    expect(ms("2024-01-15T05:00:00-0530")).toBe(base);
    expect(ms("2024-01-15T10:30:00")).toBe(base);
    expect(ms("2024-01-15 10:30:00")).toBe(base);
    expect(ms("2024-01-15T10:30:00.123456Z")).toBe(base + 123);
    expect(ms("2024-01-15")).toBe(Date.UTC(2024, 0, 15));
  });

  it("reads epoch seconds below 1e11 and milliseconds from 1e11, fractions allowed", () => {
    expect(ms(base / 1000)).toBe(base);
    expect(ms(base / 1000 + 0.25)).toBe(base + 250);
    expect(ms(base)).toBe(base);
    expect(ms(99_999_999_999)).toBe(99_999_999_999_000);
    expect(ms(100_000_000_000)).toBe(100_000_000_000);
    expect(ms(String(base / 1000))).toBe(base);
    expect(ms(0)).toBe(0);
  });

  it("refuses what is not a time", () => {
    for (const bad of ["", "yesterday", "0099-06-01T00:00:00Z", "1969-12-31T23:59:59Z", "2024-13-01T00:00:00Z", "2024-02-30T00:00:00Z", "2024-01-15T24:00:00Z", "2024-01-15T10:30:00+25:00", -1, Number.NaN, Infinity, null, true, {}, 1e20, "10000-01-01"]) {
      expect(parseTimestamp(bad).ok, String(bad)).toBe(false);
    }
  });

  it("writes ISO 8601 UTC with Z", () => {
    expect(toIso(base)).toBe("2024-01-15T10:30:00.000Z");
    expect(toIso(null)).toBeNull();
  });
});
