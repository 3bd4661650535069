// Analytics: totals and per-period charts (uPlot, drawn on canvas) over the request logs of a range.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { post } from "../api";
import { ErrorBox, fmt, Loading, Section, useAsync } from "../ui";

const RANGES: Record<string, number> = { "24 hours": 1, "7 days": 7, "30 days": 30, "90 days": 90 };

function toSeconds(date: string): number {
  const t = Date.parse(/T|Z/.test(date) ? date : date.length <= 10 ? `${date}T00:00:00Z` : `${date.replace(" ", "T")}Z`);
  return t / 1000;
}

interface ChartProps {
  title: string;
  x: number[];
  /** The x axis spans the range asked for (seconds), not just the periods that have data. */
  span: [number, number];
  series: { label: string; values: (number | null)[]; color: string }[];
}

function Chart({ title, x, span, series }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const width = Math.max(320, box.current.clientWidth - 8);
    const plot = new uPlot(
      {
        title,
        width,
        height: 220,
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: x.length < 40 } }))],
        scales: { x: { time: true, range: () => span } },
        axes: [{}, { size: 60 }],
      },
      [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
      box.current,
    );
    return () => plot.destroy();
  }, [title, JSON.stringify(x), JSON.stringify(series), span[0], span[1]]);
  return <div class="chart" ref={box} data-testid="chart" />;
}

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
