import { describe, expect, it } from 'vitest';
import { isTransientStatus, MAX_RETRY_AFTER_MS, parseRetryAfterMs, retryDelayMs } from './retry.js';

describe('isTransientStatus', () => {
  it('retries 5xx and 429, nothing else', () => {
    for (const status of [429, 500, 502, 503, 504, 599]) expect(isTransientStatus(status)).toBe(true);
    for (const status of [200, 201, 400, 401, 403, 404, 409, 413, 422])
      expect(isTransientStatus(status)).toBe(false);
  });
});

describe('retryDelayMs', () => {
  const middle = () => 0.5;

  it('doubles from the base delay', () => {
    expect([1, 2, 3].map((attempt) => retryDelayMs({ attempt, baseDelayMs: 1000, random: middle }))).toEqual([
      1000, 2000, 4000,
    ]);
  });

  it('jitters by ±20 %', () => {
    expect(retryDelayMs({ attempt: 1, baseDelayMs: 1000, random: () => 0 })).toBe(800);
    expect(retryDelayMs({ attempt: 1, baseDelayMs: 1000, random: () => 1 })).toBe(1200);
  });

  it('honours a longer Retry-After, up to 60 s', () => {
    expect(retryDelayMs({ attempt: 1, baseDelayMs: 1000, retryAfter: '5', random: middle })).toBe(5000);
    expect(retryDelayMs({ attempt: 1, baseDelayMs: 1000, retryAfter: '0', random: middle })).toBe(1000);
    expect(retryDelayMs({ attempt: 1, baseDelayMs: 1000, retryAfter: '3600', random: middle })).toBe(
      MAX_RETRY_AFTER_MS,
    );
  });

  it('a base delay of 0 retries at once', () => {
    expect(retryDelayMs({ attempt: 3, baseDelayMs: 0 })).toBe(0);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfterMs('3', now)).toBe(3000);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    for (const value of [undefined, '', 'soon', '-1']) expect(parseRetryAfterMs(value, now)).toBeUndefined();
  });
});
