import { HOUR_MS, MINUTE_MS, parseDurationMs, SECOND_MS } from '../domain/duration.js';

/**
 * One environment variable: how it is read, and what `--help` and docs/configuration.md say about
 * it. The variable's name is its key in the table (settings.ts), so it is written once.
 */
export interface Setting<T> {
  readonly group: SettingGroup;
  /** One line for `zekt serve --help`; `helpDefault` is appended to it. */
  readonly help: string;
  /** The *meaning* cell of its row in docs/configuration.md. */
  readonly doc: string;
  /** The *default* cell of its row (Markdown). */
  readonly docDefault: string;
  /** The default for `--help`, plain; null when unset has its own meaning, said in `help`. */
  readonly helpDefault: string | null;
  /** Read only when this other setting has a value (null otherwise): it refines that one. */
  readonly onlyWith?: string;
  /** Documented in the row of this other setting (a pair such as an OAuth client's id and secret). */
  readonly sameRowAs?: string;
  /**
   * The value from `raw` (trimmed; undefined when unset or blank). A bad value adds a problem that
   * names the variable and what it accepts, and reads as the default, so the rules that relate it
   * to others still run and every problem is reported together.
   */
  readonly read: (raw: string | undefined, name: string, problems: string[]) => T;
}

/** The tables of docs/configuration.md, in its order. */
export const SETTING_GROUPS = ['service', 'tracing'] as const;
export type SettingGroup = (typeof SETTING_GROUPS)[number];

interface Described {
  group: SettingGroup;
  help: string;
  doc: string;
  /** The *default* cell when the value alone does not say it (`67108864` (64 MiB)). */
  docDefault?: string;
  onlyWith?: string;
  sameRowAs?: string;
}

function setting<T>(described: Described, shown: string | null, read: Setting<T>['read']): Setting<T> {
  return {
    group: described.group,
    help: described.help,
    doc: described.doc,
    docDefault: described.docDefault ?? (shown === null ? 'unset' : `\`${shown}\``),
    helpDefault: shown,
    ...(described.onlyWith === undefined ? {} : { onlyWith: described.onlyWith }),
    ...(described.sameRowAs === undefined ? {} : { sameRowAs: described.sameRowAs }),
    read,
  };
}

const got = (raw: string) => `(got ${JSON.stringify(raw)})`;

/** A whole number within bounds. */
export function integer(d: Described & { default: number; min: number; max: number }): Setting<number> {
  return setting(d, String(d.default), (raw, name, problems) => {
    if (raw === undefined) return d.default;
    const parsed = Number(raw);
    if (!Number.isInteger(parsed) || parsed < d.min || parsed > d.max) {
      problems.push(`${name} must be a whole number from ${d.min} to ${d.max} ${got(raw)}`);
      return d.default;
    }
    return parsed;
  });
}

/** `true` or `false`; `invalid` follows the problem (what the value is for). */
export function flag(d: Described & { default: boolean; invalid?: string }): Setting<boolean> {
  return setting(d, String(d.default), (raw, name, problems) => {
    if (raw === undefined) return d.default;
    if (raw !== 'true' && raw !== 'false') {
      problems.push(`${name} must be true or false ${got(raw)}${d.invalid ?? ''}`);
      return d.default;
    }
    return raw === 'true';
  });
}

/** Any text, with a default. */
export function text(d: Described & { default: string }): Setting<string> {
  return setting(d, d.default, (raw) => raw ?? d.default);
}

/** Any text, or null when unset; `check` returns the problem with a value it refuses. */
export function optionalText(
  d: Described & { check?: (value: string, name: string) => string | null },
): Setting<string | null> {
  return setting(d, null, (raw, name, problems) => {
    if (raw === undefined) return null;
    const problem = d.check?.(raw, name) ?? null;
    if (problem !== null) problems.push(problem);
    return raw;
  });
}

/** One of a few words. */
export function oneOf<const W extends string>(
  d: Described & { words: readonly W[]; default: W },
): Setting<W> {
  return setting(d, d.default, (raw, name, problems) => {
    if (raw === undefined) return d.default;
    const word = d.words.find((w) => w === raw);
    if (word === undefined) problems.push(`${name} must be one of ${d.words.join(', ')}`);
    return word ?? d.default;
  });
}

interface UrlRules {
  protocols: string[];
  /** The problem with a URL it refuses beyond its protocol (credentials written into it). */
  check?: (value: string, name: string) => string | null;
}

/**
 * An absolute URL of one of `protocols`, without its trailing slashes. Without a default it is
 * null when unset; a refused one reads as the default (or null).
 */
export function url(d: Described & UrlRules & { default: string }): Setting<string>;
export function url(d: Described & UrlRules): Setting<string | null>;
export function url(d: Described & UrlRules & { default?: string }): Setting<string | null> {
  const fallback = d.default ?? null;
  return setting(d, fallback, (raw, name, problems) => {
    const given = raw ?? d.default;
    if (given === undefined) return null;
    // Problems quote the value, never credentials written into it.
    const shown = JSON.stringify(given.replace(/\/\/[^/@\s]*@/, '//***@'));
    try {
      const parsed = new URL(given);
      if (!d.protocols.includes(parsed.protocol)) {
        problems.push(`${name} must be a ${d.protocols.join(' or ')} URL (got ${shown})`);
        return fallback;
      }
      const problem = d.check?.(given, name) ?? null;
      if (problem !== null) {
        problems.push(problem);
        return fallback;
      }
      return given.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be an absolute URL (got ${shown})`);
      return fallback;
    }
  });
}

/** A duration such as `10m`, in milliseconds; `expected` completes "must be …". */
export function duration(
  d: Described & { default: number; min: number; max: number; expected: string },
): Setting<number> {
  return setting(d, formatDurationMs(d.default), (raw, name, problems) => {
    if (raw === undefined) return d.default;
    const ms = parseDurationMs(raw);
    if (ms === null || ms < d.min || ms > d.max) {
      problems.push(`${name} must be ${d.expected} ${got(raw)}`);
      return d.default;
    }
    return ms;
  });
}

/** 1–50 comma-separated durations, in milliseconds; `expected` completes "must be …". */
export function durations(
  d: Described & { default: readonly number[]; min?: number; max?: number; expected: string },
): Setting<number[]> {
  return setting(d, d.default.map(formatDurationMs).join(','), (raw, name, problems) => {
    if (raw === undefined) return [...d.default];
    const parsed = raw.split(',').map((part) => parseDurationMs(part.trim()));
    const within = (ms: number | null): ms is number =>
      ms !== null && ms >= (d.min ?? 0) && ms <= (d.max ?? Number.POSITIVE_INFINITY);
    if (!parsed.every(within) || parsed.length === 0 || parsed.length > 50) {
      problems.push(`${name} must be ${d.expected} ${got(raw)}`);
      return [...d.default];
    }
    return parsed;
  });
}

/** A reader of its own (`read` says what it accepts); `shown` is the default for `--help`. */
export function custom<T>(d: Described & { shown: string | null; read: Setting<T>['read'] }): Setting<T> {
  return setting(d, d.shown, d.read);
}

/** Read by a parser of its own (the OTEL_* variables, tracing-config.ts): the text as given. */
export function passedOn(d: Described & { shown: string | null }): Setting<string | undefined> {
  return setting(d, d.shown, (raw) => raw);
}

/** `90000` → `90s`: the largest unit up to hours that divides it (`24h`, not `1d`). */
export function formatDurationMs(ms: number): string {
  if (ms === 0) return '0s';
  for (const [unit, size] of [
    ['h', HOUR_MS],
    ['m', MINUTE_MS],
    ['s', SECOND_MS],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
