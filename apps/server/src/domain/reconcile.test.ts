import { describe, expect, it } from 'vitest';
import { failedWebhooks, type ListedDelivery, reconcileBackoff } from './reconcile.js';

const now = Date.parse('2026-01-10T12:00:00Z');
const at = (hoursAgo: number) => new Date(now - hoursAgo * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
const delivery = (id: number, guid: string, statusCode: number, extra: Partial<ListedDelivery> = {}) => ({
  id,
  guid,
  statusCode,
  deliveredAt: at(1),
  event: 'workflow_run',
  action: 'completed',
  ...extra,
});

describe('failedWebhooks', () => {
  it('keeps one entry per GUID whose every attempt failed, the newest attempt', () => {
    expect(
      failedWebhooks(
        [
          delivery(5, 'a', 0),
          delivery(3, 'a', 502),
          delivery(4, 'b', 500),
          delivery(6, 'b', 202),
          delivery(2, 'c', 200),
        ],
        now,
      ).map((d) => [d.guid, d.id]),
    ).toEqual([['a', 5]]);
  });

  it('ignores events Zekt does not act on and deliveries GitHub no longer keeps', () => {
    expect(
      failedWebhooks(
        [
          delivery(1, 'ping', 0, { event: 'ping', action: null }),
          delivery(2, 'push', 500, { event: 'push', action: null }),
          delivery(3, 'old', 0, { deliveredAt: at(73) }),
          delivery(4, 'install', 0, { event: 'installation', action: 'created' }),
        ],
        now,
      ).map((d) => d.guid),
    ).toEqual(['install']);
  });
});

describe('reconcileBackoff', () => {
  it('waits for a rate limit as long as GitHub says, else a minute', () => {
    expect(reconcileBackoff({ status: 429, headers: { 'retry-after': '90' }, message: '' }, 1, now)).toEqual({
      kind: 'rate_limited',
      until: now + 90_000,
    });
    expect(
      reconcileBackoff(
        {
          status: 403,
          headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 600) },
          message: '',
        },
        1,
        now,
      ),
    ).toEqual({ kind: 'rate_limited', until: now + 600_000 });
    expect(
      reconcileBackoff({ status: 403, headers: {}, message: 'secondary rate limit' }, 1, now).until,
    ).toBe(now + 60_000);
  });

  it('doubles for 401, 404 and outages, capped at 6 hours', () => {
    expect(reconcileBackoff({ status: 401, headers: {}, message: '' }, 1, now)).toEqual({
      kind: 'unauthorized',
      until: now + 300_000,
    });
    expect(reconcileBackoff({ status: 404, headers: {}, message: '' }, 3, now)).toEqual({
      kind: 'not_found',
      until: now + 1_200_000,
    });
    expect(reconcileBackoff({ status: undefined, headers: {}, message: 'ECONNRESET' }, 2, now)).toEqual({
      kind: 'unavailable',
      until: now + 120_000,
    });
    expect(
      reconcileBackoff({ status: 503, headers: { 'retry-after': '600' }, message: '' }, 1, now).until,
    ).toBe(now + 600_000);
    expect(reconcileBackoff({ status: 404, headers: {}, message: '' }, 50, now).until).toBe(
      now + 6 * 3_600_000,
    );
  });
});
