import { describe, expect, it } from 'vitest';
import { createInstallationTokenCache, type InstallationToken } from './installation-token-cache.js';

describe('installation token cache', () => {
  it('fetches once, refreshes ahead of expiry in the background, and never stalls a call', async () => {
    let now = 0;
    const fetched: number[] = [];
    let release: (() => void) | null = null;
    const cache = createInstallationTokenCache({
      now: () => now,
      refreshAheadMs: 10 * 60_000,
      fetchToken: async (installationId): Promise<InstallationToken> => {
        fetched.push(installationId);
        if (fetched.length === 2) await new Promise<void>((resolve) => (release = resolve));
        return { token: `t${fetched.length}`, expiresAt: now + 3_600_000 };
      },
    });
    // Concurrent first calls share one fetch.
    expect(await Promise.all([cache.get(7), cache.get(7)])).toEqual(['t1', 't1']);
    expect(fetched).toEqual([7]);
    // Inside the refresh window: the current token at once, a refresh started behind it.
    now = 55 * 60_000;
    expect(await cache.get(7)).toBe('t1');
    expect(await cache.get(7)).toBe('t1');
    expect(fetched).toEqual([7, 7]);
    (release as (() => void) | null)?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.get(7)).toBe('t2');
    // A token GitHub refused is forgotten.
    cache.forget(7, 't2');
    expect(await cache.get(7)).toBe('t3');
  });

  it('waits for a new token when the cached one is about to expire', async () => {
    let now = 0;
    let n = 0;
    const cache = createInstallationTokenCache({
      now: () => now,
      fetchToken: async () => ({ token: `t${++n}`, expiresAt: now + 3_600_000 }),
    });
    expect(await cache.get(1)).toBe('t1');
    now = 3_600_000 - 30_000;
    expect(await cache.get(1)).toBe('t2');
  });
});
