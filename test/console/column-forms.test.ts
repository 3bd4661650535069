// The column forms of the console (console/src/column-forms.ts): each type's fields become the
// configuration the API takes, and that configuration is one the blocks accept.
import { describe, expect, it } from "vitest";
import { COLUMN_TYPES, configOf, fieldOfRule, initialValues, TYPE_FORMS } from "../../console/src/column-forms";
import { parameterText, responseFormatChoice, withParameter, draftOf } from "../../console/src/draft";
import { validateBlockConfig } from "../../src/blocks";

describe("column forms", () => {
  it("offers every type the API takes, each with a label and a line of help", () => {
    expect(COLUMN_TYPES).toHaveLength(22);
    for (const t of COLUMN_TYPES) expect(TYPE_FORMS[t].label && TYPE_FORMS[t].help).toBeTruthy();
  });

  it("builds configurations the blocks accept from filled-in forms", () => {
    const filled: Record<string, Record<string, unknown>> = {
      COUNT: { source: "answer", type: "chars" },
      CONTAINS: { source: "answer", value: "blue" },
      MATH_OPERATOR: { "sources.0": "n", operator: "gt", value: "3" },
      COMPARE: { "sources.0": "a", "sources.1": "b", "comparison_type.type": "JSON" },
      VARIABLE: { "value.type": "string", "value.value": "hi" },
      COALESCE: { sources: ["a", "b"] },
      PROMPT_TEMPLATE: { "template.name": "greeter", prompt_template_variable_mappings: [["who", "Column A"], ["", ""]], "engine.provider": "openai", "engine.model": "" },
      ENDPOINT: { url: "https://example.com/hook", method: "POST", headers: "X-Token: abc\nAccept: application/json", timeout_ms: "" },
    };
    const want: Record<string, unknown> = {
      COUNT: { source: "answer", type: "chars" },
      CONTAINS: { source: "answer", value: "blue" },
      MATH_OPERATOR: { sources: ["n"], operator: "gt", value: 3 },
      COMPARE: { sources: ["a", "b"], comparison_type: { type: "JSON" } },
      VARIABLE: { value: { type: "string", value: "hi" } },
      COALESCE: { sources: ["a", "b"] },
      PROMPT_TEMPLATE: { template: { name: "greeter" }, prompt_template_variable_mappings: { who: "Column A" }, engine: { provider: "openai" } },
      ENDPOINT: { url: "https://example.com/hook", method: "POST", headers: { "X-Token": "abc", Accept: "application/json" } },
    };
    for (const [type, values] of Object.entries(filled)) {
      const t = type as keyof typeof TYPE_FORMS;
      const config = configOf(t, { ...initialValues(t), ...(values as Record<string, string>) });
      expect(config, type).toEqual(want[type]);
      expect(validateBlockConfig(type, config).ok, `${type}: ${JSON.stringify(validateBlockConfig(type, config))}`).toBe(true);
    }
  });

  it("sends an empty required field for the API to refuse by name, and maps the rule back to its field", () => {
    const config = configOf("COUNT", initialValues("COUNT"));
    expect(config).toEqual({ source: "", type: "words" });
    expect(fieldOfRule("COUNT", "config.source")).toBe("source");
    expect(fieldOfRule("MATH_OPERATOR", "config.sources[0]")).toBe("sources.0");
    expect(fieldOfRule("COUNT", "title")).toBeNull();
  });
});

describe("the editor's parameter controls", () => {
  it("set and clear one parameter in the JSON the draft keeps, and read the response format as a choice", () => {
    const d = draftOf({ type: "chat", messages: [] }, { model: { provider: "openai", name: "gpt-4o", parameters: { seed: 7 } } });
    const t = withParameter(d, "temperature", "0.3")!;
    expect(JSON.parse(t.parameters)).toEqual({ seed: 7, temperature: 0.3 });
    const s = withParameter(t, "stop", "END, STOP")!;
    expect(parameterText(s, "stop")).toBe("END, STOP");
    expect(JSON.parse(withParameter(s, "temperature", "")!.parameters)).toEqual({ seed: 7, stop: ["END", "STOP"] });
    expect(withParameter({ ...d, parameters: "{oops" }, "top_p", "1")).toBeNull();
    expect(responseFormatChoice({ ...d, responseFormat: "" })).toBe("");
    expect(responseFormatChoice({ ...d, responseFormat: '{"type": "json_object"}' })).toBe("json_object");
    expect(responseFormatChoice({ ...d, responseFormat: '{"type": "json_schema", "json_schema": {}}' })).toBe("custom");
  });
});
