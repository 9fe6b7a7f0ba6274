import { describe, expect, it } from 'vitest';
import { checkDispatchTarget, type TargetState } from './dispatch-target.js';

describe('dispatch target refusals', () => {
  const sendable: TargetState<string> = {
    subscriptionStatus: 'approved',
    account: { login: 'acme', installationId: 42, uninstalledAt: null },
    repository: { fullName: 'acme/deploy', removedAt: null },
    archive: 'the archived payload',
    consumerAccountId: 7,
    consumerRepositoryId: 9,
  };

  it('sends to the installation and repository of an approved subscription, with its archive', () => {
    expect(checkDispatchTarget(sendable)).toEqual({
      target: { installationId: 42, owner: 'acme', repo: 'deploy' },
      archive: 'the archived payload',
    });
  });

  it('refuses a subscription no longer approved, naming its state, before anything else', () => {
    for (const status of ['revoked', 'withdrawn', 'denied', 'requested'] as const) {
      expect(checkDispatchTarget({ ...sendable, subscriptionStatus: status, archive: null })).toEqual({
        refused: {
          category: 'other',
          reason: 'subscription_inactive',
          message: `the subscription is ${status}: Zekt no longer sends its repository anything`,
        },
      });
    }
    expect(checkDispatchTarget({ ...sendable, subscriptionStatus: null })).toMatchObject({
      refused: { reason: 'subscription_inactive', message: expect.stringContaining('is gone') },
    });
  });

  it('refuses an account the App left, naming the account (by id when its row is gone)', () => {
    for (const account of [
      { login: 'acme', installationId: null, uninstalledAt: null },
      { login: 'acme', installationId: 42, uninstalledAt: 1 },
    ]) {
      expect(checkDispatchTarget({ ...sendable, account })).toEqual({
        refused: {
          category: 'not_found',
          message: 'the Zekt GitHub App is no longer installed on acme; ask its owner to install it again',
        },
      });
    }
    expect(checkDispatchTarget({ ...sendable, account: null })).toMatchObject({
      refused: { category: 'not_found', message: expect.stringContaining('installed on account 7;') },
    });
  });

  it('refuses a repository removed from the installation, naming it (by id when its row is gone)', () => {
    expect(
      checkDispatchTarget({ ...sendable, repository: { fullName: 'acme/deploy', removedAt: 1 } }),
    ).toEqual({
      refused: {
        category: 'not_found',
        message:
          'repository acme/deploy is no longer part of the Zekt installation of acme; add it to the installation again',
      },
    });
    expect(checkDispatchTarget({ ...sendable, repository: null })).toMatchObject({
      refused: { message: expect.stringContaining('repository 9 is no longer part') },
    });
  });

  it('refuses a delivery whose archived payload expired', () => {
    expect(checkDispatchTarget({ ...sendable, archive: null })).toEqual({
      refused: { category: 'other', message: 'the archived payload of this delivery has expired' },
    });
  });
});
