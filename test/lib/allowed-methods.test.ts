import { describe, expect, it } from "vitest";
import { allowedMethods, shadowingMethods } from "../../src/lib/allowed-methods";

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

describe("shadowingMethods", () => {
  const table = [
    { method: "ALL", path: "*" },
    { method: "GET", path: "/requests/:request_id" },
    { method: "POST", path: "/requests/search" },
    { method: "GET", path: "/folders/:folder_id" },
    { method: "PATCH", path: "/folders/:folder_id" },
    { method: "GET", path: "/folders/entities" },
    { method: "POST", path: "/folders/entities" },
  ];
  it("answers the literal route's methods when it does not take the method, whatever a placeholder route takes", () => {
    expect(shadowingMethods(table, "GET", "/requests/search")).toEqual(["POST"]);
    expect(shadowingMethods(table, "HEAD", "/requests/search")).toEqual(["POST"]);
    expect(shadowingMethods(table, "PATCH", "/folders/entities")).toEqual(["GET", "HEAD", "POST"]);
  });
  it("is null where the most specific route takes the method, or no route matches", () => {
    expect(shadowingMethods(table, "POST", "/requests/search")).toBeNull();
    expect(shadowingMethods(table, "GET", "/requests/42")).toBeNull();
    expect(shadowingMethods(table, "HEAD", "/folders/entities")).toBeNull();
    expect(shadowingMethods(table, "GET", "/nothing/here")).toBeNull();
    // A method no route of the path takes: the same 405 allowedMethods would give.
    expect(shadowingMethods(table, "DELETE", "/requests/42")).toEqual(["GET", "HEAD"]);
  });
});
