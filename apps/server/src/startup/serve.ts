import type { Config } from '../config.js';
import { createLogger, createZekt, type Role, type Zekt } from '../zekt.js';
import { type AppVerification, verifyAppAtStart } from './app-verification.js';
import { explainDatabaseFailure } from './database-problems.js';
import { boundHeapGrowth } from './heap-growth.js';

/**
 * `zekt serve` with its start-up checks, in the order an operator fixes things: the database
 * (opened and migrated: one that does not exist, a missing role, no right to create tables), the
 * App credentials against GitHub (app-verification.ts), then the ports (startup/listen.ts). Each
 * operator mistake stops the process with one line and exit code 2 (cli/main.ts prints it).
 */
export async function runServe(options: {
  config: Config;
  role: Role;
  untilStopped: () => Promise<void>;
  write: (line: string) => void;
}): Promise<void> {
  const { config, role } = options;
  boundHeapGrowth();
  const logger = createLogger(config.logLevel);
  let verification: AppVerification | null = null;
  let zekt: Zekt;
  try {
    zekt = await createZekt({
      config,
      role,
      logger,
      notReadyReason: () => verification?.notReadyReason() ?? null,
    });
  } catch (error) {
    throw explainDatabaseFailure(error, config.database) ?? error;
  }
  try {
    verification = await verifyAppAtStart({
      credentials: await zekt.appCredentials.get(),
      apiUrl: config.github.apiUrl,
      mode: config.mode,
      logger: logger.child({ component: 'startup' }),
    });
    const url = await zekt.start();
    // Test harnesses and the bench wait for "zekt worker running"; the probe URL follows it.
    options.write(
      role === 'worker'
        ? `zekt worker running, probes and metrics on ${url}\n`
        : `zekt ${role} listening on ${url}, metrics on ${zekt.metricsUrl}\n`,
    );
    await announceSetupMode(zekt, role, options.write);
  } catch (error) {
    verification?.stop();
    await zekt.stop().catch(() => undefined);
    throw error;
  }
  await options.untilStopped();
  verification.stop();
  await zekt.stop();
}

/**
 * Setup mode, said at start: the setup URL (like Jupyter's and Grafana's first-run links), which
 * only this log and `zekt setup` show; a worker says it waits for the App.
 */
async function announceSetupMode(zekt: Zekt, role: Role, write: (line: string) => void): Promise<void> {
  if (role === 'worker') {
    if ((await zekt.appCredentials.get()) === null) {
      write(
        'zekt worker: no GitHub App is configured yet (setup mode); it uses the App registered through setup as soon as there is one, without a restart\n',
      );
    }
    return;
  }
  const url = await zekt.setup.setupUrl();
  if (url === null) return;
  write(
    [
      '',
      'zekt: no GitHub App is configured yet (setup mode). Register one from your browser:',
      '',
      `    ${url}`,
      '',
      '  The code in this URL is what lets you register the App here; `zekt setup` prints it again.',
      '',
      '',
    ].join('\n'),
  );
}
