import { describe, expect, it } from 'vitest';
import { emptyCategories, recommend } from './diagnostics.js';
import {
  awaitsStart,
  DEFAULT_NOT_STARTED_AFTER_MS,
  describeWait,
  isNotStarted,
  notStartedCutoff,
  notStartedDueAt,
} from './not-started.js';

describe('never-started deliveries', () => {
  const accepted = Date.UTC(2026, 10, 22, 12, 0);

  it('waits for durable deliveries only, and flags them exactly ZEKT_NOT_STARTED_AFTER after acceptance', () => {
    expect(DEFAULT_NOT_STARTED_AFTER_MS).toBe(600_000);
    expect(awaitsStart({ durable: true })).toBe(true);
    expect(awaitsStart({ durable: false })).toBe(false);
    const after = DEFAULT_NOT_STARTED_AFTER_MS;
    expect(notStartedDueAt(accepted, after)).toBe(accepted + after);
    expect(notStartedCutoff(accepted + after, after)).toBe(accepted);
    expect(isNotStarted({ awaitingStartSince: accepted }, accepted + after - 1, after)).toBe(false);
    expect(isNotStarted({ awaitingStartSince: accepted }, accepted + after, after)).toBe(true);
    // No longer waiting (confirmed, completed, or a run was seen): never flagged.
    expect(isNotStarted({ awaitingStartSince: null }, accepted + 10 * after, after)).toBe(false);
  });

  it('has its own diagnostics category with the workflow to fix, naming the event types', () => {
    const counts = { ...emptyCategories(), not_started: 3, timeout: 1 };
    const recommendations = recommend({
      consumerAccount: 'globex',
      consumerRepository: 'globex/app',
      counts,
      durable: true,
      notStarted: { eventTypes: ['deployed', 'released'], afterMs: DEFAULT_NOT_STARTED_AFTER_MS },
    });
    expect(recommendations.map((r) => r.category)).toEqual(['not_started', 'timeout']);
    expect(recommendations[0]?.text).toContain('within 10 min');
    expect(recommendations[0]?.text).toContain(
      'must exist on the default branch of globex/app with `on: repository_dispatch: types: [deployed, released]`',
    );
    expect(describeWait(90_000)).toBe('90 s');
  });
});
