import type { SecretBox } from '../security/secret-box.js';
import { findHookById, hookChanges } from '../store/hooks.js';
import type { RepositoryHookRow } from '../store/schema.js';
import type { Store } from '../store/store.js';

/**
 * The hooks Zekt placed, by GitHub's hook id, with their secrets decrypted: every repository
 * webhook needs its hook's secret, and reading and decrypting it per request was a store read and an
 * AES-GCM open per webhook. Entries live `ttlMs`; a signature that does not match a
 * cached secret is checked again against the store (`fresh`), so a hook whose secret changed — in
 * this process or another — is never refused because of the cache, and a change made by this
 * process empties the cache at once (another process's is seen within `ttlMs`). Unknown ids are
 * not cached: a new hook's id becomes known the moment it is recorded.
 */
export interface HookSecrets {
  byId(hookId: number, options?: { fresh?: boolean }): Promise<KnownHook | undefined>;
}

export interface KnownHook {
  hook: RepositoryHookRow;
  secret: string;
  /** Came from the cache rather than the store. */
  cached: boolean;
}

export function createHookSecrets(deps: {
  store: Store;
  secretBox: SecretBox;
  ttlMs?: number;
  now?: () => number;
}): HookSecrets {
  const ttlMs = deps.ttlMs ?? 5_000;
  const now = deps.now ?? (() => performance.now());
  const cache = new Map<number, { hook: RepositoryHookRow; secret: string; until: number }>();
  let seenChanges = hookChanges();
  return {
    async byId(hookId, options = {}) {
      if (hookChanges() !== seenChanges) {
        cache.clear();
        seenChanges = hookChanges();
      }
      const entry = cache.get(hookId);
      if (entry && !options.fresh && now() < entry.until) {
        return { hook: entry.hook, secret: entry.secret, cached: true };
      }
      const hook = await findHookById(deps.store.db, hookId);
      if (!hook) {
        cache.delete(hookId);
        return undefined;
      }
      const secret = deps.secretBox.open(hook.secret_encrypted);
      if (cache.size >= 10_000) cache.clear();
      cache.set(hookId, { hook, secret, until: now() + ttlMs });
      return { hook, secret, cached: false };
    },
  };
}
