/**
 * The chart of `zekt bench --compare`: p99 latency (webhook sent → dispatch arrived; the ceiling:
 * answered) against the offered rate, one line per target, on a logarithmic latency axis so that
 * milliseconds and seconds both read. Plain SVG, no dependency.
 */
export interface ChartSeries {
  name: string;
  points: Array<{ rate: number; p99: number }>;
}

const COLORS = ['#6b7280', '#d97706', '#2563eb', '#059669', '#7c3aed', '#dc2626'];

export function latencyChartSvg(series: ChartSeries[], title: string): string {
  const width = 760;
  const height = 420;
  const left = 70;
  const right = 250;
  const top = 40;
  const bottom = 50;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const rates = series.flatMap((s) => s.points.map((p) => p.rate));
  const values = series.flatMap((s) => s.points.map((p) => Math.max(p.p99, 0.1)));
  const maxRate = Math.max(1, ...rates);
  const minLog = Math.floor(Math.log10(Math.min(1, ...values)));
  const maxLog = Math.ceil(Math.log10(Math.max(10, ...values)));
  const x = (rate: number) => left + (rate / maxRate) * plotW;
  const y = (ms: number) =>
    top + plotH - ((Math.log10(Math.max(ms, 0.1)) - minLog) / (maxLog - minLog)) * plotH;
  const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="14" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let exp = minLog; exp <= maxLog; exp++) {
    const ms = 10 ** exp;
    out.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${y(ms).toFixed(1)}" y2="${y(ms).toFixed(1)}" stroke="#e5e7eb"/>`,
      `<text x="${left - 8}" y="${(y(ms) + 4).toFixed(1)}" text-anchor="end">${ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`}</text>`,
    );
  }
  for (const rate of [...new Set(rates)].sort((a, b) => a - b)) {
    out.push(
      `<line x1="${x(rate).toFixed(1)}" x2="${x(rate).toFixed(1)}" y1="${top}" y2="${top + plotH}" stroke="#f3f4f6"/>`,
      `<text x="${x(rate).toFixed(1)}" y="${top + plotH + 18}" text-anchor="middle">${rate}</text>`,
    );
  }
  out.push(
    `<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#9ca3af"/>`,
    `<text x="${left + plotW / 2}" y="${height - 12}" text-anchor="middle">offered rate (webhooks/s)</text>`,
    `<text x="16" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + plotH / 2})">p99 latency (log)</text>`,
  );
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const points = [...s.points].sort((a, b) => a.rate - b.rate);
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map((p) => `${x(p.rate).toFixed(1)},${y(p.p99).toFixed(1)}`).join(' ')}"/>`,
      ...points.map(
        (p) => `<circle cx="${x(p.rate).toFixed(1)}" cy="${y(p.p99).toFixed(1)}" r="3" fill="${color}"/>`,
      ),
      `<line x1="${left + plotW + 16}" x2="${left + plotW + 36}" y1="${top + 10 + i * 20}" y2="${top + 10 + i * 20}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${left + plotW + 42}" y="${top + 14 + i * 20}">${esc(s.name)}</text>`,
    );
  });
  out.push('</svg>', '');
  return out.join('\n');
}
