// The small parsers behind JSON_PATH, XML_PATH and APPLY_DIFF, beyond what the block tests cover.
import { describe, expect, it } from "vitest";
import { compileJsonPath, queryJsonPath } from "../../src/blocks/jsonpath";
import { compileXPath, parseXml, queryXml, textContent } from "../../src/blocks/xml";
import { renderTemplate, templateVariables } from "../../src/blocks/template";

describe("JSONPath subset", () => {
  const doc = { store: { book: [{ t: "a", p: 8 }, { t: "b", p: 12 }, { t: "c", p: 9 }], "odd key": 1 }, t: "root" };
  it("reads names, indexes, wildcards, slices, unions and descendants", () => {
    expect(queryJsonPath(doc, "$.store.book[-1].t")).toEqual(["c"]);
    expect(queryJsonPath(doc, "$.store.book[0:2].t")).toEqual(["a", "b"]);
    expect(queryJsonPath(doc, "$.store.book[::-1].t")).toEqual(["c", "b", "a"]);
    expect(queryJsonPath(doc, "$.store.book[0,2].p")).toEqual([8, 9]);
    expect(queryJsonPath(doc, "$['store']['odd key']")).toEqual([1]);
    expect(queryJsonPath(doc, "$..t")).toEqual(["root", "a", "b", "c"]);
    expect(queryJsonPath(doc, "store.book[*].p")).toEqual([8, 12, 9]);
    expect(queryJsonPath([1, 2], "$")).toEqual([[1, 2]]);
  });
  it("refuses what it does not support, with a reason", () => {
    expect(() => compileJsonPath("$.a[?(@.b > 1)]")).toThrow(/filter expressions are not supported/);
    expect(() => compileJsonPath("$.a[1:2:0]")).toThrow(/step cannot be 0/);
    expect(() => compileJsonPath("$.a b")).toThrow(/unexpected/);
  });
});

describe("XML reader and paths", () => {
  it("reads CDATA, entities and comments, and skips DOCTYPE without expanding it", () => {
    const root = parseXml('<!DOCTYPE r [<!ENTITY x "boom">]><r><!-- c --><a k="1&amp;2"><![CDATA[<raw>]]> &#65;&#x42;</a></r>');
    expect(textContent(root)).toBe("<raw> AB");
    expect(queryXml(root, "a[@k='1&2']")).toHaveLength(1);
    expect(() => parseXml("<r>&x;</r>")).toThrow(/unknown entity/);
    expect(() => parseXml("<r></r><s/>")).toThrow(/more than one root/);
  });
  it("follows ElementTree paths: absolute, descendant, parent, positions and child predicates", () => {
    const root = parseXml("<lib><shelf><book lang='en'><t>A</t></book><book><t>B</t></book></shelf><book><t>C</t></book></lib>");
    const texts = (p: string) => queryXml(root, p).map(textContent);
    expect(texts("shelf/book")).toEqual(["A", "B"]);
    expect(texts(".//book")).toEqual(["A", "B", "C"]);
    expect(texts("//book[@lang]")).toEqual(["A"]);
    expect(texts("/lib/book")).toEqual(["C"]);
    expect(texts("shelf/book[2]")).toEqual(["B"]);
    expect(texts("shelf/book[last()]")).toEqual(["B"]);
    expect(texts(".//book[t='C']")).toEqual(["C"]);
    expect(texts(".//t[.='B']/..")).toEqual(["B"]);
    expect(() => compileXPath("a/")).toThrow(/cannot end with/);
  });
});

describe("templates", () => {
  it("f-string: {var}, dotted fields, {{ and }} as braces", () => {
    expect(renderTemplate("Hi {name}, {{literal}} {user.age}", { name: "Ann", user: { age: 3 } })).toBe("Hi Ann, {literal} 3");
    expect(templateVariables("{a} {{b}} {c.d}")).toEqual(["a", "c"]);
    expect(() => renderTemplate("{a b}", {})).toThrow(/invalid variable/);
  });
  it("jinja2: {{ var }} and comments; control tags are refused", () => {
    expect(renderTemplate("{# note #}Hi {{ name }}{{x.y}}", { name: "Ann", x: { y: "!" } }, "jinja2")).toBe("Hi Ann!");
    expect(templateVariables("{{ a }} {{b.c}} {a2}", "jinja2")).toEqual(["a", "b"]);
    expect(() => renderTemplate("{% if a %}x{% endif %}", { a: 1 }, "jinja2")).toThrow(/control tags/);
    expect(() => renderTemplate("{{ a | upper }}", { a: "x" }, "jinja2")).toThrow(/not supported/);
  });
});
