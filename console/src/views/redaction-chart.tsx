// Analytics: how many values the workspace's redaction policy replaced, per detector and period
// (POST /api/public/v2/requests/analytics/redactions), over the analytics view's range.
import { post } from "../api";
import { ErrorBox, fmt, useAsync } from "../ui";
import { Chart, toSeconds } from "./chart";

const COLORS = ["#1f5fbf", "#b3261e", "#2f7d32", "#a36b00", "#6a1b9a", "#00838f", "#5d4037", "#c2185b"];

export function RedactionChart({ since, span, hourly }: { since: number; span: [number, number]; hourly: boolean }) {
  const data = useAsync(
    () => (since ? post("/api/public/v2/requests/analytics/redactions", { filter_group: { logic: "AND", filters: [{ field: "request_start_time", operator: "after", value: new Date(since).toISOString() }] } }) : Promise.resolve(null)),
    [since],
  );
  const d = data.data;
  if (data.error) return <ErrorBox error={data.error} />;
  if (!d) return null;
  const detectors = Object.keys(d.totals).sort();
  const periods = [...new Set(d.series.map((s) => s.period))].sort();
  const x = periods.map(toSeconds);
  return (
    <div class="redaction-chart" data-testid="redaction-chart">
      <h3>Redacted values</h3>
      {detectors.length === 0 ? (
        <p class="muted">Nothing redacted in this range (see Privacy for the workspace's policy).</p>
      ) : (
        <>
          <p class="totals">
            {detectors.map((k) => (
              <span key={k} data-detector={k}>
                <b>{fmt.num(d.totals[k])}</b> {k}
              </span>
            ))}
          </p>
          <Chart
            title="Redacted values"
            x={x}
            span={span}
            hourly={hourly}
            format={(v) => fmt.num(v)}
            series={detectors.map((k, i) => ({ label: k, color: COLORS[i % COLORS.length], values: periods.map((p) => d.series.find((s) => s.period === p && s.detector === k)?.redacted ?? null) }))}
          />
        </>
      )}
    </div>
  );
}
