import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createGitHubSimulator, type GitHubSimulator } from 'zekt-github-sim';
import { type Environment, loadConfig } from '../config.js';
import { createLogger, createZekt, type Zekt } from '../zekt.js';
import { CliError } from './cli-error.js';
import { acquireDataDirLock } from './data-dir-lock.js';
import { seedDemo } from './demo-seed.js';
import { dataRoot, demoStatePath, devDataDir } from './dev-paths.js';
import { createReadableLogStream } from './readable-log.js';
import { environmentForSimulator } from './simulator-environment.js';

/**
 * `zekt dev`: the GitHub simulator, the service configured against it, and a seeded demo — one
 * command for a newcomer. The simulator keeps its state in memory, so the store starts empty too.
 * The simulator runs in GitHub Enterprise mode (hooks may target loopback URLs): on github.com a
 * hook URL must be reachable over the public Internet.
 */
export async function runDev(input: {
  env: Environment;
  port: number;
  simPort: number;
  untilStopped: () => Promise<void>;
}): Promise<void> {
  // Taken before anything is emptied: a second `npm start` must not touch a running demo's store.
  const lock = acquireDataDirLock(dataRoot(input.env));
  try {
    await runDemo(input);
  } finally {
    lock.release();
  }
}

async function runDemo(input: Parameters<typeof runDev>[0]): Promise<void> {
  const dataDir = devDataDir(input.env);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });

  let sim: GitHubSimulator;
  try {
    sim = await createGitHubSimulator({
      host: '127.0.0.1',
      port: input.simPort,
      allowPrivateHookUrls: true,
    });
  } catch (error) {
    throw portInUse(error, input.simPort, 'the GitHub simulator', '--sim-port <port>');
  }
  let zekt: Zekt | undefined;
  try {
    const config = loadConfig(
      environmentForSimulator(sim, { port: input.port, dataDir, logLevel: input.env.LOG_LEVEL ?? 'warn' }),
    );
    zekt = await createZekt({
      config,
      logger: createLogger(config.logLevel, createReadableLogStream(process.stdout)),
    });
    try {
      await zekt.start();
    } catch (error) {
      throw portInUse(error, input.port, "Zekt's API", '--port <port> or PORT=<port>');
    }
  } catch (error) {
    await zekt?.stop();
    await sim.close();
    throw error;
  }
  const zektUrl = `http://127.0.0.1:${input.port}`;
  sim.setAppWebhookUrl(`${zektUrl}/webhooks/github`);
  const demo = await seedDemo({ zektUrl, sim, store: zekt.store });
  writeFileSync(demoStatePath(input.env), `${JSON.stringify(demo, null, 2)}\n`);

  process.stdout.write(
    [
      '',
      'Zekt is running with a GitHub simulator and a demo.',
      '',
      `  Zekt            ${zektUrl}   (API: ${zektUrl}/api/openapi.json)`,
      `  Console         ${zektUrl}/   (Log in with GitHub: the simulator lets you pick alice or bob)`,
      `  GitHub sim      ${sim.url}   (REST: ${sim.apiUrl})`,
      '',
      `  Provider        ${demo.provider.account} (user ${demo.provider.user}): ${demo.provider.repository}, workflow ${demo.provider.workflow} whitelisted,`,
      `                  published as the service "${demo.serviceSlug}" (repository_dispatch type ${demo.eventType})`,
      `  Consumer        ${demo.consumer.account} (user ${demo.consumer.user}): ${demo.consumer.repository}, subscription approved,`,
      '                  durable delivery on; its workflow confirms and completes each delivery',
      '                  (it also runs by workflow_dispatch: switch "Delivered as" in Zekt Subscriptions)',
      '',
      `  API token (${demo.provider.user}):  ${demo.tokens.provider}`,
      `  API token (${demo.consumer.user}):    ${demo.tokens.consumer}`,
      '',
      'In another terminal, run a provider workflow and watch the dispatch arrive:',
      '',
      `  npm run trigger -- '{"version":"1.2.3"}'`,
      '',
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  );
  await input.untilStopped();
  await zekt.stop();
  await sim.close();
}

/**
 * EADDRINUSE as one line naming the port, whose it is, and how to pick another: `zekt dev` is
 * chosen with flags, so the start-up check's own message (which names `PORT`) is replaced.
 */
function portInUse(error: unknown, port: number, whose: string, choose: string): unknown {
  const failure = error as { code?: unknown; cause?: { code?: unknown } } | null;
  if (failure?.code !== 'EADDRINUSE' && failure?.cause?.code !== 'EADDRINUSE') return error;
  return new CliError(
    `zekt dev: port ${port} (${whose}) is in use by another process; choose another with ${choose}`,
  );
}
