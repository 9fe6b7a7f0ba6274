import { describe, expect, it } from 'vitest';
import {
  afterDispatchAttempt,
  complete,
  confirm,
  dispatchFailureReason,
  outcomeUnknown,
} from './delivery-state.js';
import { emptyCategories, recommend } from './diagnostics.js';
import { parseDurationMs } from './duration.js';
import type { ErrorCategory } from './error-category.js';
import { connectionHealth } from './health.js';

describe('delivery state transitions', () => {
  const dispatched = { status: 'Dispatched' as const, confirmedAt: null, confirmationAttempts: 0 };

  it('confirms, counting every confirmation, and keeps the first ConfirmedAt', () => {
    const first = confirm(dispatched, 100);
    expect(first).toEqual({
      outcome: 'changed',
      change: { status: 'Confirmed', confirmedAt: 100, confirmationAttempts: 1 },
    });
    const again = confirm({ status: 'Confirmed', confirmedAt: 100, confirmationAttempts: 1 }, 200);
    expect(again).toEqual({
      outcome: 'changed',
      change: { status: 'Confirmed', confirmedAt: 100, confirmationAttempts: 2 },
    });
  });

  it('completes from Dispatched or Confirmed, setting ConfirmedAt when it was skipped', () => {
    expect(complete(dispatched, true, 300)).toEqual({
      outcome: 'changed',
      change: {
        status: 'Completed',
        confirmedAt: 300,
        completedAt: 300,
        conclusion: 'success',
        isFinalized: true,
        confirmationAttempts: 0,
      },
    });
    const failed = complete({ status: 'Confirmed', confirmedAt: 100, confirmationAttempts: 1 }, false, 300);
    expect(failed.outcome === 'changed' && failed.change).toMatchObject({
      status: 'Failed',
      confirmedAt: 100,
      conclusion: 'failure',
      isFinalized: true,
    });
  });

  it('never leaves Completed or Failed', () => {
    for (const status of ['Completed', 'Failed'] as const) {
      const state = { status, confirmedAt: 1, confirmationAttempts: 1 };
      expect(confirm(state, 5)).toEqual({ outcome: 'final' });
      expect(complete(state, true, 5)).toEqual({ outcome: 'final' });
      expect(complete(state, false, 5)).toEqual({ outcome: 'final' });
    }
  });
});

describe('connection health (the seed table)', () => {
  const now = 1_000_000_000_000;
  const health = (total: number, succeeded: number, lastEventAt: number | null = now) =>
    connectionHealth({ total, succeeded, lastEventAt, now }).health;

  it('draws the lines at 98 % and 90 % exactly', () => {
    expect(health(10_000, 9_800)).toBe('Healthy');
    expect(health(10_000, 9_799)).toBe('Warning');
    expect(health(10_000, 9_000)).toBe('Warning');
    expect(health(10_000, 8_999)).toBe('Critical');
    expect(health(100, 100)).toBe('Healthy');
    expect(health(1, 0)).toBe('Critical');
    expect(connectionHealth({ total: 10_000, succeeded: 9_799, lastEventAt: now, now }).successRate).toBe(
      97.99,
    );
    expect(connectionHealth({ total: 3, succeeded: 2, lastEventAt: now, now }).successRate).toBe(66.66);
  });

  it('is Healthy with no events yet, Warning without activity for 7 days', () => {
    expect(health(0, 0, null)).toBe('Healthy');
    const week = 7 * 24 * 3_600_000;
    expect(health(0, 0, now - week)).toBe('Healthy');
    expect(health(0, 0, now - week - 1)).toBe('Warning');
    expect(
      connectionHealth({ total: 0, succeeded: 0, lastEventAt: now - week - 1, now }).recentActivity,
    ).toBe(false);
  });
});

describe('diagnostics recommendations', () => {
  it('recommends for each category that occurred, most frequent first, naming what to fix', () => {
    const counts = { ...emptyCategories(), auth: 2, rate_limited: 5 };
    const recommendations = recommend({
      consumerAccount: 'globex',
      consumerRepository: 'globex/app',
      counts,
      durable: true,
    });
    expect(recommendations.map((r) => r.category)).toEqual(['rate_limited', 'auth']);
    expect(recommendations[1]!.text).toContain('Contents: read & write');
    expect(recommendations[1]!.text).toContain('globex');
    expect(recommendations[0]!.text).toContain('ZEKT_INSTALLATION_DISPATCH_RATE');
    expect(
      recommend({
        consumerAccount: 'g',
        consumerRepository: 'g/a',
        counts: emptyCategories(),
        durable: false,
      }),
    ).toEqual([]);
  });
});

describe('durations', () => {
  it('read numbers with units', () => {
    expect(parseDurationMs('0s')).toBe(0);
    expect(parseDurationMs('250ms')).toBe(250);
    expect(parseDurationMs('1.5m')).toBe(90_000);
    expect(parseDurationMs('24h')).toBe(86_400_000);
    expect(parseDurationMs('2d')).toBe(172_800_000);
    expect(parseDurationMs('10')).toBeNull();
    expect(parseDurationMs('-1s')).toBeNull();
  });
});

describe('dispatch-side failure reasons', () => {
  it('names the category for a non-durable delivery, and why a durable one stopped', () => {
    expect(dispatchFailureReason({ durable: false, permanent: true, category: 'not_found' })).toBe(
      'dispatch_failed: not_found',
    );
    expect(dispatchFailureReason({ durable: true, permanent: true, category: 'rejected' })).toBe(
      'dispatch_rejected',
    );
    expect(dispatchFailureReason({ durable: true, permanent: true, category: 'not_found' })).toBe(
      'consumer_not_found',
    );
    expect(dispatchFailureReason({ durable: true, permanent: false, category: 'timeout' })).toBe(
      'dispatch_exhausted',
    );
  });
});

describe('dispatch-side transitions', () => {
  const durable = { durable: true, attemptsMade: 1, retryNumber: 0 };
  const timing = { now: 1_000, schedule: [0, 10_000, 60_000], random: () => 0.5 };
  const failed = (
    status: number | undefined,
    category: ErrorCategory,
    headers: Record<string, string> = {},
  ) => ({
    outcome: 'failed' as const,
    status,
    category,
    headers,
    calledGitHub: true,
  });

  it('keeps the retry number when GitHub accepts', () => {
    expect(afterDispatchAttempt(durable, { outcome: 'accepted' }, timing)).toEqual({ next: 'accepted' });
  });

  it('retries a durable delivery on the schedule after a transient failure, counting the failure', () => {
    expect(afterDispatchAttempt(durable, failed(503, 'service_unavailable'), timing)).toEqual({
      next: 'retry',
      dueAt: 11_000,
      retryNumber: 1,
    });
    expect(
      afterDispatchAttempt(
        { ...durable, attemptsMade: 2, retryNumber: 1 },
        failed(undefined, 'timeout'),
        timing,
      ),
    ).toEqual({ next: 'retry', dueAt: 61_000, retryNumber: 2 });
  });

  it('waits as long as GitHub’s Retry-After asks when that is longer than the schedule', () => {
    expect(
      afterDispatchAttempt(durable, failed(429, 'rate_limited', { 'retry-after': '120' }), timing),
    ).toEqual({ next: 'retry', dueAt: 121_000, retryNumber: 1 });
  });

  it('fails a durable delivery for good on 404 and 422, and when the schedule is used up (an alert)', () => {
    expect(afterDispatchAttempt(durable, failed(422, 'rejected'), timing)).toEqual({
      next: 'failed',
      failureReason: 'dispatch_rejected',
      retryNumber: 1,
      exhausted: false,
    });
    expect(afterDispatchAttempt(durable, failed(404, 'not_found'), timing)).toMatchObject({
      next: 'failed',
      failureReason: 'consumer_not_found',
    });
    expect(
      afterDispatchAttempt(
        { ...durable, attemptsMade: 3, retryNumber: 2 },
        failed(503, 'service_unavailable'),
        timing,
      ),
    ).toEqual({ next: 'failed', failureReason: 'dispatch_exhausted', retryNumber: 3, exhausted: true });
  });

  it('gives a non-durable delivery one attempt, whatever failed', () => {
    expect(
      afterDispatchAttempt({ ...durable, durable: false }, failed(503, 'service_unavailable'), timing),
    ).toEqual({
      next: 'failed',
      failureReason: 'dispatch_failed: service_unavailable',
      retryNumber: 1,
      exhausted: false,
    });
  });

  it('fails at once, for Zekt’s own reason, what never reached GitHub', () => {
    expect(
      afterDispatchAttempt(
        durable,
        { ...failed(undefined, 'other'), calledGitHub: false, reason: 'subscription_inactive' },
        timing,
      ),
    ).toEqual({ next: 'failed', failureReason: 'subscription_inactive', retryNumber: 1, exhausted: false });
    expect(
      afterDispatchAttempt(durable, { ...failed(undefined, 'not_found'), calledGitHub: false }, timing),
    ).toMatchObject({ next: 'failed', failureReason: 'consumer_not_found' });
  });

  it('never sends a non-durable delivery twice: a reclaimed one has an unknown outcome', () => {
    expect(outcomeUnknown({ durable: false, attemptsMade: 1 })).toBe(false);
    expect(outcomeUnknown({ durable: false, attemptsMade: 2 })).toBe(true);
    expect(outcomeUnknown({ durable: true, attemptsMade: 2 })).toBe(false);
  });
});
