// Analytics: totals and per-period charts (uPlot, drawn on canvas) over the request logs of a range.
import { useState } from "preact/hooks";
import { post } from "../api";
import { ErrorBox, fmt, Loading, Section, useAsync } from "../ui";
import { Chart, toSeconds } from "./chart";
import { RedactionChart } from "./redaction-chart";

const RANGES: Record<string, number> = { "24 hours": 1, "7 days": 7, "30 days": 30, "90 days": 90 };

export function AnalyticsView() {
  const [range, setRange] = useState("7 days");
  const [span, setSpan] = useState<[number, number]>([0, 0]);
  const data = useAsync(() => {
    const now = Date.now();
    const since = new Date(now - RANGES[range] * 86_400_000).toISOString();
    setSpan([Math.floor((now - RANGES[range] * 86_400_000) / 1000), Math.ceil(now / 1000)]);
    return post("/api/public/v2/requests/analytics", {
      filter_group: { logic: "AND", filters: [{ field: "request_start_time", operator: "after", value: since }] },
    });
  }, [range]);
  const d = data.data;
  const stats = d?.stats ?? [];
  const x = stats.map((s) => toSeconds(String(s.date)));
  const byDate = (m: Partial<Record<string, number | null>> | undefined) => stats.map((s) => m?.[s.date] ?? null);
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
        {!d ? (
          <Loading />
        ) : (
          <>
            <div class="totals">
              <div>
                <b>{fmt.num(d.totalRequests)}</b> requests
              </div>
              <div>
                <b>{fmt.num(d.totalTokens)}</b> tokens
              </div>
              <div>
                <b>{fmt.cost(d.totalCost)}</b> cost
              </div>
              <div>
                <b>{d.averageLatency === null || d.averageLatency === undefined ? "" : `${Number(d.averageLatency).toFixed(2)} s`}</b> average latency
              </div>
            </div>
            {stats.length ? (
              <div class="charts">
                <Chart title="Requests" x={x} span={span} series={[{ label: "requests", values: stats.map((s) => s.requests), color: "#1f5fbf" }]} />
                <Chart title="Cost ($)" x={x} span={span} series={[{ label: "cost", values: stats.map((s) => s.cost), color: "#2f7d32" }]} />
                <Chart
                  title="Latency (s)"
                  x={x}
                  span={span}
                  series={[
                    { label: "p50", values: byDate(d.latency?.p50_latency), color: "#1f5fbf" },
                    { label: "p90", values: byDate(d.latency?.p90_latency), color: "#a36b00" },
                    { label: "p95", values: byDate(d.latency?.p95_latency), color: "#b3261e" },
                  ]}
                />
              </div>
            ) : (
              <p class="muted">No request in this range.</p>
            )}
            <RedactionChart since={span[0] * 1000} span={span} />
            <div class="two">
              <div>
                <h3>Models</h3>
                <table class="grid">
                  <tbody>
                    {(d.mostUsedModels ?? []).map(([name, n]) => (
                      <tr key={name}>
                        <td>{name}</td>
                        <td class="num">{fmt.num(n)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <div>
                <h3>Prompt templates</h3>
                <table class="grid">
                  <tbody>
                    {(d.mostUsedPromptTemplates ?? []).map((row, i) => (
                      <tr key={i}>
                        <td>{row.promptName ?? `#${row.promptId}`}</td>
                        <td class="num">{fmt.num(row.requests)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </div>
          </>
        )}
      </Section>
    </div>
  );
}
