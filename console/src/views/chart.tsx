// A time-series chart (uPlot, drawn on canvas) of the analytics views, and the periods' times they read.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export function toSeconds(date: string): number {
  const t = Date.parse(/T|Z/.test(date) ? date : date.length <= 10 ? `${date}T00:00:00Z` : `${date.replace(" ", "T")}Z`);
  return t / 1000;
}

interface ChartProps {
  title: string;
  x: number[];
  /** The x axis spans the range asked for (seconds), not just the periods that have data. */
  span: [number, number];
  series: { label: string; values: (number | null)[]; color: string }[];
  /** How the y axis reads its values ($, s, %). */
  format: (v: number) => string;
  /** Periods of an hour: the legend shows the time of day too. */
  hourly: boolean;
}

export function Chart({ title, x, span, series, format, hourly }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const width = Math.max(280, box.current.clientWidth - 8);
    // A line needs two points: with fewer (or a handful of periods) each period is a bar.
    const bars = x.length < 3;
    const plot = new uPlot(
      {
        title,
        width,
        height: 220,
        series: [
          { value: (_u, v) => (v === null ? "" : new Date(v * 1000).toLocaleString(undefined, hourly ? { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" } : { month: "short", day: "numeric" })) },
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            fill: bars ? `${s.color}55` : undefined,
            width: bars ? 1 : 2,
            paths: bars ? uPlot.paths.bars!({ size: [0.6, 40] }) : undefined,
            points: { show: !bars && x.length < 40 },
            value: (_u: uPlot, v: number | null) => (v === null ? "" : format(v)),
          })),
        ],
        scales: { x: { time: true, range: () => span }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
        axes: [{ space: 70 }, { size: 70, values: (_u, splits) => splits.map((v) => format(v)) }],
      },
      [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
      box.current,
    );
    return () => plot.destroy();
  }, [title, JSON.stringify(x), JSON.stringify(series), span[0], span[1]]);
  return <div class="chart" ref={box} data-testid="chart" data-kind={x.length < 3 ? "bars" : "lines"} />;
}
