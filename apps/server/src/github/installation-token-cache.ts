/**
 * Installation tokens for dispatches (cached until shortly before expiry). GitHub's tokens
 * live an hour. A cached token is used until `refreshAheadMs` before it expires; from then on the
 * next call starts a refresh in the background and still gets the current token, so no dispatch
 * ever waits for a token unless the installation has none that is still good. One fetch per
 * installation at a time, however many dispatches ask.
 */
export interface InstallationToken {
  token: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface InstallationTokenCache {
  get(installationId: number): Promise<string>;
  /** Forgets a token GitHub refused (401), so the next call fetches a new one. */
  forget(installationId: number, token: string): void;
}

export function createInstallationTokenCache(options: {
  fetchToken: (installationId: number) => Promise<InstallationToken>;
  now?: () => number;
  /** Refresh this long before expiry (default 10 minutes). */
  refreshAheadMs?: number;
  /** A token this close to expiry is not used at all (default 1 minute). */
  minimumValidityMs?: number;
}): InstallationTokenCache {
  const now = options.now ?? Date.now;
  const refreshAheadMs = options.refreshAheadMs ?? 10 * 60_000;
  const minimumValidityMs = options.minimumValidityMs ?? 60_000;
  const tokens = new Map<number, InstallationToken>();
  const fetching = new Map<number, Promise<InstallationToken>>();

  const refresh = (installationId: number): Promise<InstallationToken> => {
    let pending = fetching.get(installationId);
    if (!pending) {
      pending = options
        .fetchToken(installationId)
        .then((fresh) => {
          tokens.set(installationId, fresh);
          return fresh;
        })
        .finally(() => fetching.delete(installationId));
      fetching.set(installationId, pending);
    }
    return pending;
  };

  return {
    async get(installationId) {
      const cached = tokens.get(installationId);
      const left = cached ? cached.expiresAt - now() : 0;
      if (cached && left > minimumValidityMs) {
        // A background refresh that fails is retried by the next call; the current token still works.
        if (left < refreshAheadMs) refresh(installationId).catch(() => undefined);
        return cached.token;
      }
      return (await refresh(installationId)).token;
    },
    forget(installationId, token) {
      if (tokens.get(installationId)?.token === token) tokens.delete(installationId);
    },
  };
}
