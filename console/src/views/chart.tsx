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
}

export function Chart({ title, x, span, series }: ChartProps) {
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
