// Analytics: totals and per-period charts (uPlot, drawn on canvas) over the request logs of a range:
// by the hour up to 48 hours (the API buckets by the hour when both bounds are given and at most two
// days apart), by the day beyond; bars where a series has too few points to draw a line. Error rate,
// cost by model and requests by prompt version come beside them.
import { useState } from "preact/hooks";
import { post } from "../api";
import type { StructuredFilter } from "../api.gen";
import { href } from "../router";
import { EmptyState, ErrorBox, fmt, Loading, Section, useAsync } from "../ui";
import { Chart, toSeconds } from "./chart";
import { RedactionChart } from "./redaction-chart";

const HOUR = 3_600_000;
/** The ranges offered, in hours. */
const RANGES: Record<string, number> = { "hour": 1, "24 hours": 24, "48 hours": 48, "7 days": 168, "30 days": 720, "90 days": 2160 };

/** A ranked list drawn as bars: label, value, and a bar as long as its share of the largest. */
function BarList({ rows, format, testId, empty }: { rows: { label: string; value: number; shown?: string; link?: string }[]; format: (v: number) => string; testId: string; empty: string }) {
  if (!rows.length) return <p class="muted">{empty}</p>;
  const max = Math.max(...rows.map((r) => r.value), 0) || 1;
  return (
    <table class="bar-list" data-testid={testId}>
      <tbody>
        {rows.map((r) => (
          <tr key={r.label}>
            <th>{r.link ? <a href={r.link}>{r.label}</a> : r.label}</th>
            <td class="bar-cell">
              <svg class="share" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
                <rect x="0" y="0" height="10" width={String(Math.max(0.5, (r.value / max) * 100))} />
              </svg>
            </td>
            <td class="num">{r.shown ?? format(r.value)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const money = (v: number) => (v === 0 ? "$0" : fmt.cost(v));
const seconds = (v: number) => `${Math.round(v * 100) / 100} s`;
const count = (v: number) => (Math.abs(v) >= 1000 ? `${Math.round(v / 100) / 10}k` : String(Math.round(v * 10) / 10));
const percent = (v: number) => `${Math.round(v * 10) / 10}%`;

interface VersionRow {
  prompt: string;
  promptId: string;
  versions: { label: string; value: number }[];
}

export function AnalyticsView() {
  const [range, setRange] = useState("7 days");
  const [span, setSpan] = useState<[number, number]>([0, 0]);
  const hours = RANGES[range]!;
  const hourly = hours <= 48;
  const data = useAsync(async () => {
    const now = Date.now();
    const since = now - hours * HOUR;
    setSpan([Math.floor(since / 1000), Math.ceil(now / 1000)]);
    // Both bounds over two days at most: the API answers by the hour.
    const time: StructuredFilter[] = [
      { field: "request_start_time", operator: "after", value: new Date(since).toISOString() },
      ...(hourly ? [{ field: "request_start_time" as const, operator: "before" as const, value: new Date(now + 60_000).toISOString() }] : []),
    ];
    const filter_group = { logic: "AND" as const, filters: time };
    const [main, charts] = await Promise.all([
      post("/api/public/v2/requests/analytics", { filter_group }),
      post("/api/public/v2/requests/analytics/custom-analytics", {
        filter_group,
        customCharts: [{ id: "cost_by_model", title: "Cost by model", chartType: "bar", metric: "sum", metricField: "cost", groupByField: "engine", limit: 10, timeSeries: false }],
      }),
    ]);
    // Requests by version, for the busiest templates (one breakdown each, as the filter differs).
    const top = main.mostUsedPromptTemplates.slice(0, 4);
    const versions: VersionRow[] = await Promise.all(
      top.map(async (t) => {
        const res = await post("/api/public/v2/requests/analytics/custom-analytics", {
          filter_group: { logic: "AND", filters: [...time, { field: "prompt_id", operator: "is", value: Number(t.promptId) }] },
          customCharts: [{ id: "by_version", title: "Requests by version", chartType: "bar", metric: "count", groupByField: "prompt_version_number", limit: 20, timeSeries: false }],
        });
        const rows = (res.customCharts[0]?.data ?? []).map((d) => ({ label: String(d.label) === "(none)" ? "no version (a draft)" : `v${d.label}`, value: Number(d.value ?? 0) }));
        return { prompt: t.promptName ?? `template ${t.promptId}`, promptId: t.promptId, versions: rows };
      }),
    );
    return { main, costByModel: charts.customCharts[0]?.data ?? [], versions };
  }, [range]);
  const d = data.data?.main;
  const stats = d?.stats ?? [];
  const x = stats.map((s) => toSeconds(String(s.date)));
  const byDate = (m: Partial<Record<string, number | null>> | undefined) => stats.map((s) => m?.[s.date] ?? null);
  const errorRate = stats.map((s) => (s.requests ? ((s.statusCounts.ERROR ?? 0) / s.requests) * 100 : null));
  return (
    <div>
      <Section
        title="Analytics"
        actions={
          <select aria-label="Range" value={range} onChange={(e) => setRange((e.target as HTMLSelectElement).value)}>
            {Object.keys(RANGES).map((r) => (
              <option value={r} key={r}>
                last {r}
              </option>
            ))}
          </select>
        }
      >
        <ErrorBox error={data.error} />
        {data.error ? (
          <button type="button" onClick={data.reload}>
            Try again
          </button>
        ) : null}
        {!d ? (
          data.error ? null : <Loading />
        ) : d.totalRequests === 0 ? (
          <EmptyState text="No request was logged in this range: try a longer one, or log a request." action={<a class="button" href={href("requests")}>Requests</a>} />
        ) : (
          <>
            <div class="totals" data-testid="totals">
              <div>
                <b>{fmt.num(d.totalRequests)}</b> requests
              </div>
              <div>
                <b data-testid="error-rate">{percent(d.errorRate * 100)}</b> errors
              </div>
              <div>
                <b>{fmt.num(d.totalTokens)}</b> tokens
              </div>
              <div>
                <b>{money(d.totalCost)}</b> cost
              </div>
              <div>
                <b>{d.averageLatency === null || d.averageLatency === undefined ? "" : seconds(Number(d.averageLatency))}</b> average latency
              </div>
            </div>
            <p class="muted" data-testid="interval">
              By the {d.chartInterval.interval} ({stats.length} {d.chartInterval.interval === "hour" ? "hours" : "days"} with requests).
            </p>
            <div class="charts">
              <Chart title="Requests" x={x} span={span} hourly={hourly} format={count} series={[{ label: "requests", values: stats.map((s) => s.requests), color: "#1f5fbf" }]} />
              <Chart title="Error rate" x={x} span={span} hourly={hourly} format={percent} series={[{ label: "errors", values: errorRate, color: "#b3261e" }]} />
              <Chart title="Cost" x={x} span={span} hourly={hourly} format={money} series={[{ label: "cost", values: stats.map((s) => s.cost), color: "#2f7d32" }]} />
              <Chart
                title="Latency"
                x={x}
                span={span}
                hourly={hourly}
                format={seconds}
                series={[
                  { label: "p50", values: byDate(d.latency?.p50_latency), color: "#1f5fbf" },
                  { label: "p90", values: byDate(d.latency?.p90_latency), color: "#a36b00" },
                  { label: "p95", values: byDate(d.latency?.p95_latency), color: "#b3261e" },
                ]}
              />
            </div>
            <RedactionChart since={span[0] * 1000} span={span} hourly={hourly} />
            <div class="two">
              <div>
                <h3>Cost by model</h3>
                <BarList
                  testId="cost-by-model"
                  format={money}
                  empty="No model in this range."
                  rows={(data.data?.costByModel ?? []).map((r) => ({ label: String(r.label), value: Number(r.value ?? 0), shown: Number(r.value ?? 0) === 0 ? fmt.cost(0, String(r.label)) : undefined }))}
                />
                <h3>Requests by model</h3>
                <BarList testId="requests-by-model" format={count} empty="No model in this range." rows={(d.mostUsedModels ?? []).map(([name, n]) => ({ label: name, value: n }))} />
              </div>
              <div>
                <h3>Requests by prompt version</h3>
                {(data.data?.versions ?? []).length === 0 ? <p class="muted">No request in this range came from a prompt template.</p> : null}
                {(data.data?.versions ?? []).map((v) => (
                  <div key={v.promptId} class="version-breakdown" data-testid="requests-by-version">
                    <h4>
                      <a href={href("prompts", v.promptId)}>{v.prompt}</a>
                    </h4>
                    <BarList testId={`versions-${v.promptId}`} format={count} empty="No version." rows={v.versions} />
                  </div>
                ))}
              </div>
            </div>
          </>
        )}
      </Section>
    </div>
  );
}
