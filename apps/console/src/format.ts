/** Times as people read them, in their own time zone; the full ISO time is in the title. */
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

export function formatTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? dateOnly.format(new Date(iso)) : '—';
}

export function formatClock(date: Date): string {
  return timeOnly.format(date);
}

export function formatPercent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value}%`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** `dispatchApiCalls` → "Dispatch API calls". */
export function counterLabel(name: string): string {
  const words = name
    .replace(/([A-Z])/g, ' $1')
    .toLowerCase()
    .replace(/\bapi\b/, 'API');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * 32 random hex digits, for Idempotency-Key headers (`crypto.randomUUID` exists only in secure
 * contexts; this works everywhere).
 */
export function randomKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join(
    '',
  );
}

/**
 * A link target from the API (a run's page on GitHub), or undefined unless it is http(s): a
 * `javascript:` URL must never become a link.
 */
export function webUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}
