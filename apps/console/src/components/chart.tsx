import { useId } from 'react';
import type { Tone } from './badge';

export interface Bar {
  label: string;
  value: number | null;
  tone?: Tone;
  /** What a reader hears and sees in the tooltip, e.g. "Nov 20: 98% of 50". */
  text: string;
}

/**
 * A bar chart in SVG (no chart library, nothing inline that the CSP would block). The numbers are
 * also in a table for screen readers, so the picture is never the only way to read them.
 */
export function BarChart({ title, bars, max }: { title: string; bars: Bar[]; max?: number }) {
  const id = useId();
  const top = max ?? Math.max(1, ...bars.map((b) => b.value ?? 0));
  const width = 100 / Math.max(1, bars.length);
  return (
    <figure className="chart" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>{title}</figcaption>
      <svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-labelledby={`${id}-title`}>
        <title id={`${id}-title`}>{title}</title>
        <line x1="0" y1="40" x2="100" y2="40" className="chart-axis" />
        {bars.map((bar, index) => {
          const height = bar.value === null ? 0 : Math.max(0.6, (bar.value / top) * 38);
          return (
            <rect
              key={bar.label}
              className={`chart-bar chart-${bar.value === null ? 'empty' : (bar.tone ?? 'info')}`}
              x={index * width + width * 0.15}
              width={width * 0.7}
              y={40 - height}
              height={height}
            >
              <title>{bar.text}</title>
            </rect>
          );
        })}
      </svg>
      <div className="chart-labels" aria-hidden="true">
        <span>{bars[0]?.label}</span>
        <span>{bars[bars.length - 1]?.label}</span>
      </div>
      <table className="sr-only">
        <caption>{title}</caption>
        <tbody>
          {bars.map((bar) => (
            <tr key={bar.label}>
              <td>{bar.text}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
