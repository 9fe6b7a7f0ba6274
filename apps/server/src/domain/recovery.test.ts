import { describe, expect, it } from 'vitest';
import { nextRecoveryTurn, type RecoveryTurnCandidate } from './recovery.js';

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

describe('nextRecoveryTurn', () => {
  it('takes the recovery whose last batch started longest ago; one never started counts from its creation', () => {
    const running = [
      recovery('rec_a', { createdAt: 1, turnAt: 50, leaseOwner: 'w', leaseExpiresAt: 100 }),
      recovery('rec_b', { createdAt: 10 }),
    ];
    expect(nextRecoveryTurn(running, 'w', 60)?.recoveryId).toBe('rec_b');
    expect(
      nextRecoveryTurn([...running.slice(0, 1), recovery('rec_b', { createdAt: 10, turnAt: 55 })], 'w', 60)
        ?.recoveryId,
    ).toBe('rec_a');
  });

  it("never takes another worker's live lease; takes an expired one", () => {
    const held = recovery('rec_a', { turnAt: 1, leaseOwner: 'other', leaseExpiresAt: 100 });
    expect(nextRecoveryTurn([held], 'w', 99)).toBeUndefined();
    expect(nextRecoveryTurn([held], 'w', 100)?.recoveryId).toBe('rec_a');
  });

  it('breaks a tie with the older recovery, and has nothing to take from nothing', () => {
    expect(nextRecoveryTurn([recovery('rec_b'), recovery('rec_a')], 'w', 5)?.recoveryId).toBe('rec_a');
    expect(nextRecoveryTurn([], 'w', 5)).toBeUndefined();
  });
});
