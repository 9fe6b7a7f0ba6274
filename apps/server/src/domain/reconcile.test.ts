import { describe, expect, it } from 'vitest';
import {
  decideRedelivery,
  failedWebhooks,
  isReceivedThrough,
  type ListedDelivery,
  MAX_REDELIVERY_ASKS,
  reconcileBackoff,
} from './reconcile.js';

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
        'repository',
      ).map((d) => [d.guid, d.id]),
    ).toEqual([['a', 5]]);
  });

  it('ignores events Zekt does not act on through the webhook and deliveries GitHub no longer keeps', () => {
    const listed = [
      delivery(1, 'ping', 0, { event: 'ping', action: null }),
      delivery(2, 'push', 500, { event: 'push', action: null }),
      delivery(3, 'old', 0, { deliveredAt: at(73) }),
      delivery(4, 'install', 0, { event: 'installation', action: 'created' }),
      delivery(5, 'run', 0),
    ];
    expect(failedWebhooks(listed, now, 'app').map((d) => d.guid)).toEqual(['install']);
    // workflow_run is acted on through the hooks Zekt placed; the App's copy is ignored anyway.
    expect(failedWebhooks(listed, now, 'repository').map((d) => d.guid)).toEqual(['run']);
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

describe('decideRedelivery', () => {
  const failed = (id: number) => delivery(id, 'g', 0);
  const MINUTE = 60_000;

  it('asks for a webhook never asked for', () => {
    expect(decideRedelivery(failed(5), undefined, now)).toEqual({ decision: 'ask' });
  });

  it('waits while GitHub has not attempted the redelivery asked for', () => {
    const asked = { asks: 1, askedAt: now - 600 * MINUTE, githubDeliveryId: 5 };
    expect(decideRedelivery(failed(5), asked, now)).toEqual({ decision: 'wait', until: null });
  });

  it('asks again once the redelivery failed too, backing off 15 minutes, doubling', () => {
    const asked = (asks: number, askedAt: number) => ({ asks, askedAt, githubDeliveryId: 5 });
    expect(decideRedelivery(failed(6), asked(1, now), now + 14 * MINUTE)).toEqual({
      decision: 'wait',
      until: now + 15 * MINUTE,
    });
    expect(decideRedelivery(failed(6), asked(1, now), now + 15 * MINUTE)).toEqual({ decision: 'ask' });
    expect(decideRedelivery(failed(6), asked(2, now), now + 15 * MINUTE)).toEqual({
      decision: 'wait',
      until: now + 30 * MINUTE,
    });
    expect(decideRedelivery(failed(6), asked(4, now), now + 120 * MINUTE)).toEqual({ decision: 'ask' });
  });

  it(`gives up when the redelivery of the ${MAX_REDELIVERY_ASKS}th ask failed too`, () => {
    const last = { asks: MAX_REDELIVERY_ASKS, askedAt: now - 600 * MINUTE, githubDeliveryId: 5 };
    expect(decideRedelivery(failed(5), last, now)).toEqual({ decision: 'wait', until: null });
    expect(decideRedelivery(failed(6), last, now)).toEqual({ decision: 'give_up' });
  });
});

describe('isReceivedThrough', () => {
  const hook7 = { kind: 'repository', hookId: 7 } as const;

  it('counts a GUID only with the hook it came through: one event has one GUID on every hook', () => {
    expect(isReceivedThrough(hook7, [{ hookId: 8 }])).toBe(false);
    expect(isReceivedThrough(hook7, [{ hookId: 8 }, { hookId: 7 }])).toBe(true);
    expect(isReceivedThrough(hook7, [])).toBe(false);
  });

  it('counts a receipt that names no hook (written before receipts did) for every hook', () => {
    expect(isReceivedThrough(hook7, [{ hookId: null }])).toBe(true);
  });

  it("takes any receipt for the App's webhook, whose installation events reach no other hook", () => {
    expect(isReceivedThrough({ kind: 'app' }, [{ hookId: 123 }])).toBe(true);
    expect(isReceivedThrough({ kind: 'app' }, [])).toBe(false);
  });
});
