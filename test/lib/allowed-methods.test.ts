import { describe, expect, it } from "vitest";
import { allowedMethods } from "../../src/lib/allowed-methods";

const routes = [
  { method: "ALL", path: "*" },
  { method: "GET", path: "/prompt-templates" },
  { method: "POST", path: "/prompt-templates" },
  { method: "GET", path: "/prompt-templates/:identifier" },
  { method: "DELETE", path: "/prompt-templates/:identifier" },
  { method: "POST", path: "/rest/track-score" },
  { method: "GET", path: "/files/*" },
];

describe("allowedMethods", () => {
  it("lists every method of a static path, with HEAD beside GET", () => {
    expect(allowedMethods(routes, "/prompt-templates")).toEqual(["GET", "HEAD", "POST"]);
  });
  it("matches a parameter segment, but not an empty one", () => {
    expect(allowedMethods(routes, "/prompt-templates/abc")).toEqual(["DELETE", "GET", "HEAD"]);
    expect(allowedMethods(routes, "/prompt-templates/")).toEqual([]);
  });
  it("does not match a longer or shorter path", () => {
    expect(allowedMethods(routes, "/prompt-templates/abc/def")).toEqual([]);
    expect(allowedMethods(routes, "/rest")).toEqual([]);
  });
  it("a wildcard matches the rest of the path", () => {
    expect(allowedMethods(routes, "/files/a/b")).toEqual(["GET", "HEAD"]);
  });
  it("ignores middleware entries and unknown paths", () => {
    expect(allowedMethods(routes, "/nothing-here")).toEqual([]);
  });
});
