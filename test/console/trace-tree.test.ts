// The trace view's pure parts: the span tree built from the API's flat list, folding, and the
// waterfall's geometry and labels.
import { describe, expect, it } from "vitest";
import {
  attributeText,
  axisMarks,
  barOf,
  buildTree,
  eventsOf,
  formatDuration,
  kindName,
  normalizeTraceId,
  recordsBySpan,
  severityName,
  percentAt,
  statusName,
  traceWindow,
  visibleRows,
  type SpanLike,
} from "../../console/src/trace-tree";

const span = (span_id: string, parent_id: string | null, start: number, end: number, code = 0): SpanLike => ({
  span_id,
  parent_id,
  name: `span ${span_id}`,
  start_time_unix_ms: start,
  end_time_unix_ms: end,
  status: { code, message: code === 2 ? "failed" : null },
});

const shape = (rows: ReturnType<typeof buildTree>) => rows.map((r) => [r.span.span_id, r.depth]);

describe("buildTree", () => {
  it("nests children under their parents depth first, siblings by start time, whatever order the spans came in", () => {
    // root → llm (10) → tool (20); root → format (15) starts before tool but is llm's sibling.
    const spans = [span("tool", "llm", 20, 30, 2), span("format", "root", 15, 40), span("root", null, 0, 50), span("llm", "root", 10, 35)];
    const rows = buildTree(spans);
    expect(shape(rows)).toEqual([
      ["root", 0],
      ["llm", 1],
      ["tool", 2],
      ["format", 1],
    ]);
    expect(rows.map((r) => r.parent)).toEqual([-1, 0, 1, 0]);
    expect(rows.map((r) => [r.children, r.descendants])).toEqual([
      [2, 3],
      [1, 1],
      [0, 0],
      [0, 0],
    ]);
  });

  it("counts the errors below each span, so a failed descendant shows on its ancestors", () => {
    const rows = buildTree([span("root", null, 0, 50), span("a", "root", 1, 9, 2), span("b", "a", 2, 3, 2), span("c", "root", 10, 20)]);
    expect(rows.map((r) => [r.span.span_id, r.errorsBelow])).toEqual([
      ["root", 2],
      ["a", 1],
      ["b", 0],
      ["c", 0],
    ]);
  });

  it("keeps the API's order for siblings that start together", () => {
    const rows = buildTree([span("r", null, 0, 9), span("x", "r", 5, 6), span("y", "r", 5, 6), span("w", "r", 5, 6)]);
    expect(shape(rows)).toEqual([
      ["r", 0],
      ["x", 1],
      ["y", 1],
      ["w", 1],
    ]);
  });

  it("shows a span whose parent never arrived as a root, marked, with its own children under it", () => {
    const rows = buildTree([span("late", "gone", 5, 9), span("kid", "late", 6, 7), span("root", null, 0, 10)]);
    expect(shape(rows)).toEqual([
      ["root", 0],
      ["late", 0],
      ["kid", 1],
    ]);
    expect(rows.map((r) => r.parentMissing)).toEqual([false, true, false]);
  });

  it("treats a span that names itself as its parent, or an empty parent id, as a root", () => {
    const rows = buildTree([span("a", "a", 0, 1), { ...span("b", null, 2, 3), parent_id: "" }]);
    expect(shape(rows)).toEqual([
      ["a", 0],
      ["b", 0],
    ]);
    expect(rows.some((r) => r.parentMissing || r.cycle)).toBe(false);
  });

  it("still shows spans caught in a loop of parent links, each once, the earliest as a marked root", () => {
    const rows = buildTree([span("root", null, 0, 10), span("b", "a", 3, 4), span("a", "b", 2, 5), span("c", "a", 4, 5)]);
    expect(shape(rows)).toEqual([
      ["root", 0],
      ["a", 0],
      ["b", 1],
      ["c", 1],
    ]);
    expect(rows.map((r) => r.cycle)).toEqual([false, true, false, false]);
  });

  it("places every span exactly once when a span id repeats", () => {
    const rows = buildTree([span("r", null, 0, 9), span("d", "r", 1, 2), span("d", "r", 3, 4), span("k", "d", 5, 6)]);
    expect(rows).toHaveLength(4);
    expect(shape(rows)).toEqual([
      ["r", 0],
      ["d", 1],
      ["k", 2],
      ["d", 1],
    ]);
  });

  it("builds a chain of 20,000 spans without running out of stack", () => {
    const spans = Array.from({ length: 20_000 }, (_, i) => span(`s${i}`, i === 0 ? null : `s${i - 1}`, i, 20_000));
    const rows = buildTree(spans.reverse());
    expect(rows).toHaveLength(20_000);
    expect(rows[19_999].depth).toBe(19_999);
    expect(rows[0].descendants).toBe(19_999);
  });

  it("is empty for no spans", () => {
    expect(buildTree([])).toEqual([]);
  });
});

describe("visibleRows", () => {
  const rows = buildTree([span("root", null, 0, 50), span("llm", "root", 10, 35), span("tool", "llm", 20, 30), span("format", "root", 15, 40)]);

  it("folds a collapsed span's subtree and keeps the span and what follows it", () => {
    expect(visibleRows(rows, new Set(["llm"])).map((r) => r.span.span_id)).toEqual(["root", "llm", "format"]);
    expect(visibleRows(rows, new Set(["root"])).map((r) => r.span.span_id)).toEqual(["root"]);
    expect(visibleRows(rows, new Set()).map((r) => r.span.span_id)).toEqual(["root", "llm", "tool", "format"]);
  });

  it("ignores a collapsed leaf", () => {
    expect(visibleRows(rows, new Set(["tool"])).map((r) => r.span.span_id)).toEqual(["root", "llm", "tool", "format"]);
  });
});

describe("waterfall layout", () => {
  it("spans the window from the earliest start to the latest end", () => {
    expect(traceWindow([span("a", null, 1000, 1100), span("b", "a", 1050, 1300)])).toEqual({ start: 1000, end: 1300, duration: 300 });
    expect(traceWindow([])).toEqual({ start: 0, end: 0, duration: 0 });
    expect(traceWindow([span("a", null, Number.NaN, 5), span("b", null, 2, 3)])).toEqual({ start: 2, end: 5, duration: 3 });
  });

  it("places each bar at its offset with its share of the window", () => {
    const win = traceWindow([span("a", null, 1000, 2000)]);
    expect(barOf(span("a", null, 1000, 2000), win)).toEqual({ left: 0, width: 100 });
    expect(barOf(span("b", "a", 1250, 1500), win)).toEqual({ left: 25, width: 25 });
    expect(percentAt(1500, win)).toBe(50);
    expect(percentAt(500, win)).toBe(0);
    expect(percentAt(5000, win)).toBe(100);
  });

  it("keeps an instant span visible and inside the window", () => {
    const win = traceWindow([span("a", null, 0, 1000)]);
    expect(barOf(span("x", "a", 500, 500), win)).toEqual({ left: 50, width: 0.4 });
    expect(barOf(span("y", "a", 1000, 1000), win)).toEqual({ left: 99.6, width: 0.4 });
    expect(barOf(span("z", "a", 1000, 1000), win, 2)).toEqual({ left: 98, width: 2 });
  });

  it("draws an empty window (one instant span) without dividing by zero", () => {
    const win = traceWindow([span("a", null, 7, 7)]);
    expect(win.duration).toBe(0);
    expect(barOf(span("a", null, 7, 7), win)).toEqual({ left: 0, width: 0.4 });
    expect(axisMarks(win, 2)).toEqual([
      { percent: 0, ms: 0 },
      { percent: 50, ms: 0 },
      { percent: 100, ms: 0 },
    ]);
  });

  it("reads an end before the start as an instant", () => {
    const win = traceWindow([span("a", null, 0, 100)]);
    expect(barOf(span("b", "a", 60, 40), win)).toEqual({ left: 60, width: 0.4 });
  });

  it("marks the axis evenly", () => {
    expect(axisMarks({ start: 0, end: 400, duration: 400 })).toEqual([
      { percent: 0, ms: 0 },
      { percent: 25, ms: 100 },
      { percent: 50, ms: 200 },
      { percent: 75, ms: 300 },
      { percent: 100, ms: 400 },
    ]);
  });
});

describe("labels and values", () => {
  it("formats durations from microseconds to minutes", () => {
    expect(formatDuration(0)).toBe("0 ms");
    expect(formatDuration(0.25)).toBe("250 µs");
    expect(formatDuration(3.456)).toBe("3.46 ms");
    expect(formatDuration(42.26)).toBe("42.3 ms");
    expect(formatDuration(420)).toBe("420 ms");
    expect(formatDuration(1500)).toBe("1.5 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
  });

  it("names OpenTelemetry's span kinds and status codes, unknown ones as the defaults", () => {
    expect([0, 1, 2, 3, 4, 5].map(kindName)).toEqual(["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"]);
    expect(kindName(9)).toBe("UNSPECIFIED");
    expect(kindName("3")).toBe("UNSPECIFIED");
    expect([0, 1, 2, 7].map(statusName)).toEqual(["UNSET", "OK", "ERROR", "UNSET"]);
  });

  it("reads events as stored, and whatever else as far as it goes", () => {
    expect(eventsOf([{ name: "exception", timeMs: 12.5, attributes: { "exception.type": "Boom" } }])).toEqual([
      { name: "exception", timeMs: 12.5, attributes: { "exception.type": "Boom" } },
    ]);
    expect(eventsOf([null, { name: 3, timeMs: "x", attributes: [1] }])).toEqual([
      { name: "", timeMs: null, attributes: {} },
      { name: "", timeMs: null, attributes: {} },
    ]);
    expect(eventsOf("nope")).toEqual([]);
  });

  it("re-indents JSON held in a string attribute and leaves other text as sent", () => {
    expect(attributeText('[{"role":"user"}]')).toEqual({ text: '[\n  {\n    "role": "user"\n  }\n]', block: true });
    expect(attributeText("[not json]")).toEqual({ text: "[not json]", block: false });
    expect(attributeText("<script>alert(1)</script>")).toEqual({ text: "<script>alert(1)</script>", block: false });
    expect(attributeText(42)).toEqual({ text: "42", block: false });
    expect(attributeText(true)).toEqual({ text: "true", block: false });
    expect(attributeText(["a", "b"])).toEqual({ text: '[\n  "a",\n  "b"\n]', block: true });
    expect(attributeText(null)).toEqual({ text: "null", block: false });
  });

  it("takes a trace id as the API does, hex lowercased", () => {
    expect(normalizeTraceId("  A1B2C3D4E5F6A7B8C9D0E1F2A3B4C5D6 ")).toBe("a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6");
    expect(normalizeTraceId("run-42:Alpha")).toBe("run-42:Alpha");
    expect(normalizeTraceId("x".repeat(64))).toBe("x".repeat(64));
    expect(normalizeTraceId("x".repeat(65))).toBeNull();
    expect(normalizeTraceId("")).toBeNull();
    expect(normalizeTraceId("a/b")).toBeNull();
    expect(normalizeTraceId("<script>")).toBeNull();
  });
});

describe("log records in the trace view", () => {
  it("names a severity by its text, else by the range of its number", () => {
    expect(severityName({ severity_number: 9, severity_text: "info-ish" })).toBe("info-ish");
    expect([0, 1, 4, 5, 9, 13, 17, 20, 21, 24, 25].map((n) => severityName({ severity_number: n, severity_text: null }))).toEqual([
      null,
      "TRACE",
      "TRACE",
      "DEBUG",
      "INFO",
      "WARN",
      "ERROR",
      "ERROR",
      "FATAL",
      "FATAL",
      null,
    ]);
  });

  it("groups records under the spans shown, in order; the rest (no span, a span not here) are outside", () => {
    const r = (span_id: string | null, n: number) => ({ span_id, severity_number: n, severity_text: null });
    const { bySpan, outside } = recordsBySpan([r("a", 1), r(null, 2), r("b", 3), r("a", 4), r("gone", 5)], new Set(["a", "b"]));
    expect(Object.fromEntries([...bySpan].map(([k, v]) => [k, v.map((x) => x.severity_number)]))).toEqual({ a: [1, 4], b: [3] });
    expect(outside.map((x) => x.severity_number)).toEqual([2, 5]);
  });
});
