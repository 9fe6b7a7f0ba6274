import { describe, expect, it } from 'vitest';
import { type RecoveryTurnCandidate, recoveryTurns } from './recovery.js';

const recovery = (
  recoveryId: string,
  fields: Partial<RecoveryTurnCandidate> = {},
): RecoveryTurnCandidate => ({
  recoveryId,
  turnAt: null,
  createdAt: 0,
  leaseOwner: null,
  leaseExpiresAt: null,
  ...fields,
});

describe('recoveryTurns', () => {
  it('orders the takeable recoveries by when their last batch started; one never started counts from its creation', () => {
    const running = [
      recovery('rec_a', { createdAt: 1, turnAt: 50, leaseOwner: 'w', leaseExpiresAt: 100 }),
      recovery('rec_b', { createdAt: 10 }),
    ];
    const ids = (list: RecoveryTurnCandidate[]) => list.map((r) => r.recoveryId);
    expect(ids(recoveryTurns(running, 'w', 60))).toEqual(['rec_b', 'rec_a']);
    expect(
      ids(recoveryTurns([...running.slice(0, 1), recovery('rec_b', { createdAt: 10, turnAt: 55 })], 'w', 60)),
    ).toEqual(['rec_a', 'rec_b']);
  });

  it("never takes another worker's live lease; takes an expired one", () => {
    const held = recovery('rec_a', { turnAt: 1, leaseOwner: 'other', leaseExpiresAt: 100 });
    expect(recoveryTurns([held], 'w', 99)).toEqual([]);
    expect(recoveryTurns([held], 'w', 100)).toEqual([held]);
  });

  it('breaks a tie with the older recovery, and has nothing to take from nothing', () => {
    expect(recoveryTurns([recovery('rec_b'), recovery('rec_a')], 'w', 5).map((r) => r.recoveryId)).toEqual([
      'rec_a',
      'rec_b',
    ]);
    expect(recoveryTurns([], 'w', 5)).toEqual([]);
  });
});
