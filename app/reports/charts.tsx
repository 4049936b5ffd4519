/**
 * Report charts: server-rendered SVG built from recharts' primitives
 * (Surface, Layer, Rectangle, Curve) and its tick algorithm
 * (getNiceTickValues), with fixed width and height.
 *
 * Why primitives rather than <BarChart>: recharts 3's chart containers fill
 * their SVG from a store populated in effects, so on the server they render an
 * empty <div class="recharts-wrapper"> (recharts issue #5997). The primitives
 * render complete SVG on the server and hydrate identically in the browser.
 * Labels use plain <text> (recharts' <Text> measures in a layout effect).
 */
import { Curve, Layer, Rectangle, Surface, getNiceTickValues } from "recharts";

const INK = "#1f2937";
const MUTED = "#6b7280";
const BAR = "#3b6ea5";

export type Bar = { label: string; value: number; ci: [number, number] | null; n: number };

/**
 * The width a title of `text` needs at 12 px (a generous 7 px per character), so
 * the SVG is never narrower than its heading and no title is cut off.
 */
function titleWidth(text: string, x: number): number {
  return Math.ceil(x + text.length * 7 + 8);
}

function linear(d0: number, d1: number, r0: number, r1: number) {
  return (v: number) => (d1 === d0 ? r0 : r0 + ((v - d0) / (d1 - d0)) * (r1 - r0));
}

/** Vertical bars with 95% CI whiskers; n under each bar. */
export function BarsWithCI({
  title,
  bars,
  domain,
  percent,
  width: minWidth = 560,
  height = 260,
}: {
  title: string;
  bars: Bar[];
  domain?: [number, number];
  percent?: boolean;
  width?: number;
  height?: number;
}) {
  const m = { top: 24, right: 12, bottom: 56, left: 48 };
  const width = Math.max(minWidth, titleWidth(title, m.left));
  const finite = bars.filter((b) => Number.isFinite(b.value));
  const hi = Math.max(0, ...finite.map((b) => b.ci?.[1] ?? b.value));
  const lo = Math.min(0, ...finite.map((b) => b.ci?.[0] ?? b.value));
  const ticks: number[] = getNiceTickValues(domain ?? [lo, hi || 1], 5);
  const d0 = Math.min(ticks[0], domain?.[0] ?? ticks[0]);
  const d1 = Math.max(ticks[ticks.length - 1], domain?.[1] ?? 0);
  const y = linear(d0, d1, height - m.bottom, m.top);
  const band = (width - m.left - m.right) / Math.max(1, bars.length);
  const fmt = (v: number) => (percent ? `${Math.round(v * 100)}%` : Number(v.toFixed(2)).toString());
  return (
    <Surface width={width} height={height} role="img" aria-label={title} className="report-chart">
      <Layer>
        <text x={m.left} y={14} fontSize={12} fill={INK}>
          {title}
        </text>
        {ticks.map((t) => (
          <Layer key={`t${t}`}>
            <Curve
              type="linear"
              points={[
                { x: m.left, y: y(t) },
                { x: width - m.right, y: y(t) },
              ]}
              stroke="#e5e7eb"
            />
            <text x={m.left - 6} y={y(t) + 4} fontSize={10} textAnchor="end" fill={MUTED}>
              {fmt(t)}
            </text>
          </Layer>
        ))}
        {bars.map((b, i) => {
          const cx = m.left + band * i + band / 2;
          const w = Math.min(48, band * 0.6);
          const v = Number.isFinite(b.value) ? b.value : 0;
          const top = y(Math.max(v, 0));
          const base = y(Math.min(v, 0));
          return (
            <Layer key={`b${i}`} className="bar">
              <Rectangle x={cx - w / 2} y={top} width={w} height={Math.max(0, base - top)} fill={BAR}>
                <title>{`${b.label}: ${fmt(v)} (n = ${b.n})`}</title>
              </Rectangle>
              {b.ci ? (
                <Layer className="whisker">
                  <Curve
                    type="linear"
                    points={[
                      { x: cx, y: y(b.ci[0]) },
                      { x: cx, y: y(b.ci[1]) },
                    ]}
                    stroke={INK}
                    strokeWidth={1.5}
                  />
                  <Curve
                    type="linear"
                    points={[
                      { x: cx - 6, y: y(b.ci[0]) },
                      { x: cx + 6, y: y(b.ci[0]) },
                    ]}
                    stroke={INK}
                    strokeWidth={1.5}
                  />
                  <Curve
                    type="linear"
                    points={[
                      { x: cx - 6, y: y(b.ci[1]) },
                      { x: cx + 6, y: y(b.ci[1]) },
                    ]}
                    stroke={INK}
                    strokeWidth={1.5}
                  />
                </Layer>
              ) : null}
              <text x={cx} y={height - m.bottom + 14} fontSize={10} textAnchor="middle" fill={INK}>
                {b.label.length > 14 ? `${b.label.slice(0, 13)}…` : b.label}
              </text>
              <text x={cx} y={height - m.bottom + 27} fontSize={10} textAnchor="middle" fill={MUTED}>
                n={b.n}
              </text>
            </Layer>
          );
        })}
      </Layer>
    </Surface>
  );
}

/** Counts per bin (score histograms, label distributions). */
export function Histogram({
  title,
  bins,
  width = 360,
  height = 220,
}: {
  title: string;
  bins: { label: string; n: number }[];
  width?: number;
  height?: number;
}) {
  return (
    <BarsWithCI title={title} bars={bins.map((b) => ({ label: b.label, value: b.n, ci: null, n: b.n }))} width={width} height={height} />
  );
}

/** A heatmap: rows × columns of values, darker = higher; each cell shows its value. */
export function Heatmap({
  title,
  rowLabels,
  colLabels,
  values,
  min,
  max,
  format,
  rowTitle,
  colTitle,
  cell = 64,
}: {
  title: string;
  rowLabels: string[];
  colLabels: string[];
  values: (number | null)[][];
  min: number;
  max: number;
  format: (v: number) => string;
  rowTitle?: string;
  colTitle?: string;
  cell?: number;
}) {
  const left = 110;
  const top = 44;
  const width = Math.max(left + cell * colLabels.length + 12, titleWidth(title, 4));
  const height = top + cell * rowLabels.length + 12;
  const shade = (v: number) => {
    const t = max === min ? 1 : Math.max(0, Math.min(1, (v - min) / (max - min)));
    const light = Math.round(96 - t * 58);
    return `hsl(212, 55%, ${light}%)`;
  };
  return (
    <Surface width={width} height={height} role="img" aria-label={title} className="report-chart heatmap">
      <Layer>
        <text x={4} y={14} fontSize={12} fill={INK}>
          {title}
        </text>
        {colTitle ? (
          <text x={left} y={28} fontSize={10} fill={MUTED}>
            {colTitle}
          </text>
        ) : null}
        {colLabels.map((c, j) => (
          <text key={`c${j}`} x={left + cell * j + cell / 2} y={top - 4} fontSize={10} textAnchor="middle" fill={INK}>
            {c.length > 10 ? `${c.slice(0, 9)}…` : c}
          </text>
        ))}
        {rowLabels.map((r, i) => (
          <Layer key={`r${i}`}>
            <text x={left - 6} y={top + cell * i + cell / 2 + 4} fontSize={10} textAnchor="end" fill={INK}>
              {r.length > 16 ? `${r.slice(0, 15)}…` : r}
            </text>
            {colLabels.map((_, j) => {
              const v = values[i]?.[j];
              const has = v != null && Number.isFinite(v);
              const t = has && max !== min ? (v! - min) / (max - min) : 0;
              return (
                <Layer key={`v${i}-${j}`} className="cell">
                  <Rectangle x={left + cell * j} y={top + cell * i} width={cell - 2} height={cell - 2} fill={has ? shade(v!) : "#f3f4f6"}>
                    <title>{`${r} × ${colLabels[j]}: ${has ? format(v!) : "n/a"}`}</title>
                  </Rectangle>
                  <text
                    x={left + cell * j + cell / 2 - 1}
                    y={top + cell * i + cell / 2 + 3}
                    fontSize={11}
                    textAnchor="middle"
                    fill={t > 0.55 ? "#fff" : INK}
                  >
                    {has ? format(v!) : "—"}
                  </text>
                </Layer>
              );
            })}
          </Layer>
        ))}
        {rowTitle ? (
          <text x={4} y={height - 4} fontSize={10} fill={MUTED}>
            {rowTitle}
          </text>
        ) : null}
      </Layer>
    </Surface>
  );
}
