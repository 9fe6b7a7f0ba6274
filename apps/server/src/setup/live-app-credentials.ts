import type { Clock } from '../domain/clock.js';
import { SECOND_MS } from '../domain/duration.js';
import { type AppCredentials, type AppCredentialsInput, resolveAppCredentials } from './app-credentials.js';

/**
 * The App credentials a running process uses, without a restart when an App is registered
 * through setup in this process or another:
 *
 * - the environment's App never changes: resolved once;
 * - an App found in the store is kept for the life of the process (setup is refused once an App
 *   is configured, so stored credentials never change under a running process);
 * - while there is none (setup mode), the store is read again when asked: at once when asked
 *   `fresh` (a webhook arriving, `/readyz`, the setup routes) or after `invalidate()` (this process
 *   registered the App), else at most once a `recheckMs` (a dispatch, a login, the reconciler).
 *
 * So every API and worker process sharing a store uses an App registered through any of them
 * within a second at most, with no restart and no message between them: setup mode is rare and
 * short, and a read of one row by its key is all it costs meanwhile.
 */
export interface LiveAppCredentials {
  /** The credentials in use now, or null in setup mode. */
  get(options?: { fresh?: boolean }): Promise<AppCredentials | null>;
  /** What this process knows of setup mode is stale (it registered an App): the next `get` reads the store. */
  invalidate(): void;
}

/** How often setup mode re-reads the store at most, for callers that do not ask for a fresh answer. */
export const SETUP_RECHECK_MS = SECOND_MS;

export function createLiveAppCredentials(
  input: AppCredentialsInput & { clock: Clock; recheckMs?: number },
): LiveAppCredentials {
  const recheckMs = input.recheckMs ?? SETUP_RECHECK_MS;
  let known: AppCredentials | null = null;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<AppCredentials | null> | null = null;

  const read = () => {
    reading ??= resolveAppCredentials(input)
      .then((credentials) => {
        known = credentials;
        checkedAt = input.clock.now();
        return credentials;
      })
      .finally(() => {
        reading = null;
      });
    return reading;
  };

  return {
    async get(options = {}) {
      if (known !== null) return known;
      if (!options.fresh && input.clock.now() - checkedAt < recheckMs) return null;
      return read();
    },
    invalidate() {
      checkedAt = Number.NEGATIVE_INFINITY;
    },
  };
}
