/**
 * Per-turn curves (e.g. Pass_t by turn for each model) as a server-rendered
 * SVG string, drawn with recharts' SVG primitives through renderToStaticMarkup.
 * (Recharts 3's composed charts draw only after client effects, so they render
 * empty on the server; Surface/Curve/Dot render plain SVG.) The page shows the
 * numbers in a table beside it.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { Curve, Dot, Layer, Surface } from "recharts";

export type Series = { name: string; points: { x: number; y: number }[] };

/** The series colours, in order (a page drawing its own legend uses them too). */
export const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];

export function turnCurvesSvg(
  series: Series[],
  opts: { title: string; xLabel?: string; yMax?: number; width?: number; height?: number },
): string {
  const width = opts.width ?? 560;
  const height = opts.height ?? 300;
  const m = { top: 28, right: 150, bottom: 40, left: 48 };
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const xMin = xs.length ? Math.min(...xs) : 1;
  const xMax = xs.length ? Math.max(...xs) : 1;
  const yMax = opts.yMax ?? 100;
  const px = (x: number) => m.left + (xMax === xMin ? 0.5 : (x - xMin) / (xMax - xMin)) * (width - m.left - m.right);
  const py = (y: number) => height - m.bottom - (Math.max(0, Math.min(yMax, y)) / yMax) * (height - m.top - m.bottom);
  const ticksY = [0, 0.25, 0.5, 0.75, 1].map((f) => f * yMax);
  const ticksX: number[] = [];
  for (let x = xMin; x <= xMax; x++) ticksX.push(x);
  return renderToStaticMarkup(
    <Surface width={width} height={height}>
      <text x={m.left} y={16} fontSize={13} fontWeight="bold">
        {opts.title}
      </text>
      <Layer className="axes">
        {ticksY.map((t) => (
          <g key={`y${t}`}>
            <line x1={m.left} x2={width - m.right} y1={py(t)} y2={py(t)} stroke="#ddd" />
            <text x={m.left - 6} y={py(t) + 4} fontSize={11} textAnchor="end">
              {Math.round(t)}
            </text>
          </g>
        ))}
        {ticksX.map((t) => (
          <text key={`x${t}`} x={px(t)} y={height - m.bottom + 16} fontSize={11} textAnchor="middle">
            {t}
          </text>
        ))}
        <text x={(m.left + width - m.right) / 2} y={height - 6} fontSize={11} textAnchor="middle">
          {opts.xLabel ?? "turn"}
        </text>
      </Layer>
      {series.map((s, i) => {
        const color = COLORS[i % COLORS.length];
        const pts = s.points.filter((p) => Number.isFinite(p.y)).map((p) => ({ x: px(p.x), y: py(p.y) }));
        return (
          <Layer key={s.name} className="series">
            <Curve type="linear" points={pts} stroke={color} strokeWidth={2} fill="none" />
            {pts.map((p, j) => (
              <Dot key={j} cx={p.x} cy={p.y} r={3} fill={color} />
            ))}
            <rect x={width - m.right + 12} y={m.top + i * 18} width={10} height={10} fill={color} />
            <text x={width - m.right + 26} y={m.top + i * 18 + 9} fontSize={11}>
              {s.name}
            </text>
          </Layer>
        );
      })}
    </Surface>,
  );
}
