/**
 * A reader of the Prometheus text exposition format (version 0.0.4), enough for tests to look a
 * sample up by name and labels: `# HELP` / `# TYPE` lines, samples with or without labels, escaped
 * label values, and the special values NaN, +Inf, -Inf in any case.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Metric family name → type (`counter`, `gauge`, `histogram`, …). */
  types: Map<string, string>;
}

export function parsePrometheusText(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      continue;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(\s+-?\d+)?$/.exec(line);
    if (!match) throw new Error(`line ${index + 1} is not a Prometheus sample: ${line}`);
    samples.push({
      name: match[1]!,
      labels: match[2] ? parseLabels(match[2], index + 1) : {},
      value: parseValue(match[3]!, index + 1),
    });
  }
  return { samples, types };
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  const pattern = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|\})/gy;
  pattern.lastIndex = 1;
  while (pattern.lastIndex < text.length) {
    const match = pattern.exec(text);
    if (!match) throw new Error(`line ${line}: malformed labels ${text}`);
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    if (match[3] === '}') break;
  }
  return labels;
}

function parseValue(text: string, line: number): number {
  // Prometheus reads the special values case-insensitively (prom-client writes `Nan`).
  const special = text.toLowerCase();
  if (special === '+inf' || special === 'inf') return Number.POSITIVE_INFINITY;
  if (special === '-inf') return Number.NEGATIVE_INFINITY;
  if (special === 'nan') return Number.NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`line ${line}: ${text} is not a number`);
  return value;
}

/** The value of the one sample named `name` whose labels include `labels`; throws when absent or ambiguous. */
export function sampleValue(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number {
  const found = exposition.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  if (found.length !== 1) {
    throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)} (expected exactly one)`);
  }
  return found[0]!.value;
}
