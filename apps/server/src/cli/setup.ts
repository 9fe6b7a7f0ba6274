import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { systemClock } from '../domain/clock.js';
import { resolveAppCredentials } from '../setup/app-credentials.js';
import { createAppSetup } from '../setup/app-setup.js';
import { createLiveAppCredentials } from '../setup/live-app-credentials.js';
import { openStore } from '../store/store.js';
import { CliError } from './cli-error.js';

/**
 * `zekt setup`: prints the setup URL of a Zekt in setup mode — the one `zekt serve` printed, for
 * an operator who lost it or never saw the server's log. The code is derived from ZEKT_SECRET and a
 * nonce in the store (security/setup-secrets.ts), so this process computes the same URL.
 */
export async function runSetup(input: {
  config: Config;
  write: (text: string) => void;
  warn: (text: string) => void;
}): Promise<number> {
  const { config } = input;
  // Printing a code for a store nobody serves would open nothing: the server creates the store.
  if (config.database.kind === 'sqlite' && !existsSync(config.database.path)) {
    throw new CliError(
      `zekt setup: there is no store at ${config.database.path}: start \`zekt serve\` first (it prints the setup URL), or set ZEKT_DATA_DIR or DATABASE_URL to the server's`,
    );
  }
  const store = await openStore(config.database);
  try {
    await store.migrate();
    const app = await resolveAppCredentials({ store, config });
    if (app !== null) {
      input.warn(
        app.source === 'environment'
          ? `zekt setup: the GitHub App ${app.appId} is configured in the environment (GITHUB_APP_ID); setup is closed\n`
          : `zekt setup: the GitHub App ${app.slug ?? app.appId} was registered through setup; setup is closed\n`,
      );
      return 1;
    }
    const setup = createAppSetup({
      store,
      clock: systemClock,
      config,
      credentials: createLiveAppCredentials({ store, config, clock: systemClock }),
      appInstallUrl: async () => null,
    });
    const url = await setup.setupUrl();
    if (url === null) throw new Error('an App was registered while the setup URL was computed');
    input.write(`${url}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
