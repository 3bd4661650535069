import { describe, expect, it } from "vitest";
import { compileFilterGroup, compileRequestLogQuery, D1_MAX_PARAMS, escapeLike, ftsQuery, parseFilterGroup, SqlParams, type FilterGroup } from "../../src/filters";
import { ApiError } from "../../src/lib/errors";
import { INDEX_VALUE_MAX } from "../../src/filters";

function compile(raw: unknown) {
  const parsed = parseFilterGroup(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const params = new SqlParams();
  const workspace = params.add(7);
  return { sql: compileFilterGroup(parsed.group, { params, workspace }), params: params.values };
}

describe("compileFilterGroup", () => {
  it("binds values and shares equal ones; the workspace is ?1", () => {
    const { sql, params } = compile({
      logic: "OR",
      filters: [
        { field: "engine", operator: "is", value: "gpt-4o" },
        { field: "provider_type", operator: "is", value: "gpt-4o" },
        { field: "cost", operator: "between", value: [0.1, 2] },
      ],
    });
    expect(sql).toBe("(r.model = ?2 OR r.provider = ?2 OR r.price BETWEEN ?3 AND ?4)");
    expect(params).toEqual([7, "gpt-4o", 0.1, 2]);
  });

  it("sends a list as one JSON parameter, however long", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => i + 1);
    const { sql, params } = compile({ filters: [{ field: "pl_id", operator: "in", value: ids }] });
    expect(sql).toBe("r.id IN (SELECT value FROM json_each(?2))");
    expect(params).toEqual([7, JSON.stringify(ids)]);
  });

  it("keeps NULLs in the negations of nullable columns", () => {
    expect(compile({ filters: [{ field: "prompt_id", operator: "is_not", value: 3 }] }).sql).toBe("r.prompt_id IS NOT ?2");
    expect(compile({ filters: [{ field: "prompt_id", operator: "not_in", value: [3] }] }).sql).toBe(
      "(r.prompt_id IS NULL OR NOT r.prompt_id IN (?2))",
    );
  });

  it("binds a short list one parameter a value (so an OR of indexed branches stays index searches), a long one as JSON", () => {
    const short = compile({ filters: [{ field: "engine", operator: "in", value: ["a", "b", "a"] }] });
    expect(short.sql).toBe("r.model IN (?2, ?3, ?2)");
    expect(short.params).toEqual([7, "a", "b"]);
    const nine = Array.from({ length: 9 }, (_, i) => `m${i}`);
    const long = compile({ filters: [{ field: "engine", operator: "in", value: nine }] });
    expect(long.sql).toBe("r.model IN (SELECT value FROM json_each(?2))");
    expect(long.params).toEqual([7, JSON.stringify(nine)]);
  });

  it("compares a named score inside the log's scores, binding its name; negations keep logs without it", () => {
    const gte = compile({ filters: [{ field: "scores", operator: "gte", nested_key: "accuracy", value: 80 }] });
    expect(gte.sql).toBe("EXISTS (SELECT 1 FROM json_each(r.scores) AS s WHERE s.key = ?2 AND s.value >= ?3)");
    expect(gte.params).toEqual([7, "accuracy", 80]);
    expect(compile({ filters: [{ field: "scores", operator: "neq", nested_key: "a", value: 1 }] }).sql).toBe(
      "NOT EXISTS (SELECT 1 FROM json_each(r.scores) AS s WHERE s.key = ?2 AND s.value = ?3)",
    );
    expect(compile({ filters: [{ field: "scores", operator: "is_null", nested_key: "a" }] }).sql).toBe("NOT EXISTS (SELECT 1 FROM json_each(r.scores) AS s WHERE s.key = ?2)");
    expect(compile({ filters: [{ field: "group_id", operator: "is", value: 4 }] }).sql).toBe("r.group_id = ?2");
  });

  it("looks keyed values up in the search index, their tokens read from the workspace's facet rows of the field and key", () => {
    const { sql, params } = compile({ filters: [{ field: "metadata", operator: "key_equals", nested_key: "user_id", value: "u1" }] });
    expect(sql).toBe(
      "r.id IN (SELECT rowid FROM request_log_search WHERE request_log_search MATCH coalesce('keys : ' || " +
        "(SELECT '(' || group_concat('v' || f.id, ' OR ') || ')' FROM request_log_facets AS f WHERE f.workspace_id = ?1 AND f.field = 'metadata_values' AND f.key = ?2 AND f.value = ?3)" +
        ", 'keys : v0'))",
    );
    expect(params).toEqual([7, "user_id", "u1"]);
  });

  it("checks a value longer than the index keeps against the log itself", () => {
    const long = "y".repeat(INDEX_VALUE_MAX + 5);
    const { sql, params } = compile({ filters: [{ field: "input_variables", operator: "key_equals", nested_key: "doc", value: long }] });
    expect(sql).toContain("json_each(r.prompt_input_variables)");
    expect(params).toEqual([7, "doc", `${"y".repeat(INDEX_VALUE_MAX)}\u2026`, long]);
  });

  it("escapes LIKE wildcards in values", () => {
    expect(escapeLike("50%_off\\")).toBe("50\\%\\_off\\\\");
    const { params } = compile({ filters: [{ field: "engine", operator: "contains", value: "a%b" }] });
    expect(params[1]).toBe("%a\\%b%");
  });

  it("an empty group is no constraint", () => {
    expect(compile({ filters: [] }).sql).toBe("1");
  });

  it("names tables and columns as the schema does, the text unchanged by taking them from it", () => {
    const parsed = parseFilterGroup({
      logic: "AND",
      filters: [
        { field: "tags", operator: "contains", value: "t" },
        { field: "metadata", operator: "key_equals", nested_key: "env", value: "prod" },
        { field: "is_json", operator: "is_true" },
        { field: "span_name", operator: "is", value: "s" },
      ],
    });
    if (!parsed.ok) throw new Error("filter");
    const params = new SqlParams();
    const sql = compileRequestLogQuery({ filter_group: parsed.group, q: "hi" }, { params, workspace: params.add(7) });
    const term = (field: string, key: string, value: string) =>
      `(SELECT '(' || group_concat('v' || f.id, ' OR ') || ')' FROM request_log_facets AS f WHERE f.workspace_id = ?1 AND f.field = '${field}' AND f.key = ${key} AND f.value = ${value})`;
    expect(sql).toBe(
      "r.workspace_id = ?1 AND (r.id IN (SELECT rowid FROM request_log_search WHERE request_log_search MATCH coalesce('keys : ' || '(' || " +
        `${term("tags", "?3", "?2")} || ' AND ' || ${term("metadata_values", "?4", "?5")} || ')', 'keys : v0'))` +
        " AND r.output_format = 'json'" +
        " AND (SELECT s.name FROM spans AS s WHERE s.workspace_id = r.workspace_id AND s.trace_id = r.trace_id AND s.span_id = r.span_id) = ?6)" +
        " AND r.id IN (SELECT rowid FROM request_log_search WHERE request_log_search MATCH ?7)",
    );
    expect(params.values[6]).toBe('{input_text output_text} : ("hi"*)');
  });

  it("never puts a value or a nested key into the SQL text", () => {
    const evil = `x'); DROP TABLE request_logs; --`;
    const fields = [
      { field: "engine", operator: "is", value: evil },
      { field: "engine", operator: "contains", value: evil },
      { field: "input_text", operator: "starts_with", value: evil },
      { field: "tags", operator: "in", value: [evil] },
      { field: "metadata_keys", operator: "contains", value: evil },
      { field: "metadata", operator: "key_equals", nested_key: evil, value: evil },
      { field: "output", operator: "key_contains", nested_key: evil, value: evil },
      { field: "input_variables", operator: "is_null", nested_key: evil },
    ];
    const { sql, params } = compile({ logic: "OR", filters: fields });
    expect(sql).not.toContain("DROP");
    expect(sql).not.toContain(evil);
    expect(params.some((p) => String(p).includes("DROP"))).toBe(true);
  });

  it(`refuses a query needing more than ${D1_MAX_PARAMS} distinct parameters with a 400`, () => {
    const params = new SqlParams();
    for (let i = 0; i < D1_MAX_PARAMS; i++) params.add(i);
    expect(params.add(0)).toBe("?1");
    const err = (() => {
      try {
        params.add(D1_MAX_PARAMS);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
  });

  it("a maximal group of long nested values stays within the parameter limit", () => {
    const filters = Array.from({ length: 30 }, (_, i) => ({
      field: "metadata",
      operator: "key_equals",
      nested_key: `k${i}`,
      value: `${i}${"v".repeat(INDEX_VALUE_MAX)}`,
    }));
    const parsed = parseFilterGroup({ filters });
    expect(parsed.ok).toBe(true);
    const params = new SqlParams();
    const where = compileRequestLogQuery({ filter_group: (parsed as { group: FilterGroup }).group, q: "hello" }, { params, workspace: params.add(1) });
    expect(where).toContain("MATCH");
    expect(params.values.length).toBeLessThanOrEqual(D1_MAX_PARAMS);
  });
});

describe("ftsQuery", () => {
  it("quotes and prefix-matches every word, dropping punctuation and FTS syntax", () => {
    expect(ftsQuery('sky "blue" OR NEAR(x) -y*')).toBe('"sky"* "blue"* "OR"* "NEAR"* "x"* "y"*');
    expect(ftsQuery("Ünïcode 東京")).toBe('"Ünïcode"* "東京"*');
    expect(ftsQuery(" !? ")).toBeNull();
  });
});

describe("compileFilterGroup: the keyed-value filters of a group meet in one full-text query", () => {
  const group = (raw: unknown) => {
    const parsed = parseFilterGroup(raw);
    if (!parsed.ok) throw new Error("bad group");
    return parsed.group;
  };
  const g = group({
    filters: [
      { field: "metadata", operator: "key_equals", nested_key: "env", value: "prod" },
      { field: "tags", operator: "contains", value: "rare" },
      { field: "engine", operator: "is", value: "gpt-4o" },
    ],
  });
  const matches = (sql: string) => sql.match(/MATCH coalesce/g)?.length ?? 0;

  it("an AND's, joined by AND (the index intersects them), with or without estimates", () => {
    for (const estimate of [undefined, (f: { field: string }) => (f.field === "tags" ? 10 : 100_000)]) {
      const params = new SqlParams();
      const sql = compileFilterGroup(g, { params, workspace: params.add(1), estimate });
      expect(matches(sql)).toBe(1);
      expect(sql).toContain(") || ' AND ' || (SELECT");
      expect(sql).toContain("f.field = 'metadata_values'");
      expect(sql).toContain("f.field = 'tags'");
      expect(sql).toContain("r.model = ");
    }
  });

  it("an OR's, joined by OR and keeping the terms that match something; a negation is a lookup of its own", () => {
    const or = group({
      logic: "OR",
      filters: [
        { field: "tags", operator: "contains", value: "a" },
        { field: "tags", operator: "contains", value: "b" },
        { field: "tags", operator: "not_contains", value: "c" },
      ],
    });
    const params = new SqlParams();
    const sql = compileFilterGroup(or, { params, workspace: params.add(1) });
    expect(matches(sql)).toBe(2);
    expect(sql).toContain("nullif(concat_ws(' OR ', (SELECT");
    expect(sql).toContain("r.id NOT IN (SELECT rowid FROM request_log_search WHERE request_log_search MATCH coalesce(");
    expect(sql).not.toContain("EXISTS");
  });
});
