import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitHubSimulator, type GitHubSimulator } from 'zekt-github-sim';
import { eventually } from '../../test/support/harness.js';
import type { AppCredentials } from './app-credentials.js';
import { type AppVerificationOptions, verifyAppAtStart } from './app-verification.js';
import { OperatorError } from './operator-error.js';

/**
 * The App check of `zekt serve` against the simulator when GitHub is slow, away, or failing: the
 * start never waits long, never refuses for GitHub's trouble, and the answer that comes later still
 * decides readiness.
 */
let sim: GitHubSimulator;
beforeAll(async () => {
  sim = await createGitHubSimulator();
});
afterAll(async () => {
  await sim.close();
});

function credentials(privateKey = sim.app.privateKeyPem): AppCredentials {
  return {
    appId: sim.app.id,
    privateKey,
    webhookSecret: sim.app.webhookSecret,
    clientId: null,
    clientSecret: null,
    source: 'environment',
    slug: null,
    name: null,
    htmlUrl: null,
    owner: null,
    registeredAt: null,
  };
}

const anotherKey = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();

/** The check in production of credentials whose key is not the App's, with `timing` if given. */
function verifyWrongKey(logger: Logger, timing: Pick<AppVerificationOptions, 'waitMs' | 'retryMs'> = {}) {
  return verifyAppAtStart({
    credentials: credentials(anotherKey()),
    apiUrl: sim.apiUrl,
    mode: 'production',
    logger,
    ...timing,
  });
}

function capturingLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as { level: number; msg: string });
        done();
      },
    }),
  );
  return { logger, lines };
}

describe('the App check at start', () => {
  it('refuses at once in production when GitHub answers that the key is not the App’s', async () => {
    const { logger } = capturingLogger();
    const refused = verifyWrongKey(logger);
    await expect(refused).rejects.toBeInstanceOf(OperatorError);
    await expect(refused).rejects.toThrow(/GITHUB_PRIVATE_KEY is not a private key of App/);
  });

  it('does not hold the start for a slow GitHub, and its late refusal still fails readiness', async () => {
    const fault = sim.injectFaults({ path: '/app', faults: [{ kind: 'latency', delayMs: 1500 }] });
    const { logger, lines } = capturingLogger();
    const verification = await verifyWrongKey(logger, { waitMs: 100 });
    try {
      expect(verification.notReadyReason()).toBeNull();
      expect(lines.some((l) => l.msg.includes('has not answered GET /app within 0.1 s'))).toBe(true);
      const reason = await eventually(() => verification.notReadyReason() ?? undefined, 10_000);
      expect(reason).toContain('GITHUB_PRIVATE_KEY is not a private key of App');
    } finally {
      verification.stop();
      sim.clearFaults(fault.id);
    }
  });

  it('starts ready when GitHub fails, asks again, and takes the answer that comes', async () => {
    // GitHub answers 502 twice, then refuses the key: the second ask still finds it failing.
    const fault = sim.injectFaults({
      path: '/app',
      faults: [
        { kind: 'status', status: 502 },
        { kind: 'status', status: 502 },
      ],
    });
    const { logger, lines } = capturingLogger();
    const verification = await verifyWrongKey(logger, { retryMs: 100 });
    try {
      expect(verification.notReadyReason()).toBeNull();
      expect(lines[0]?.msg).toContain('the App credentials are not verified yet: GitHub answered 502');
      const reason = await eventually(() => verification.notReadyReason() ?? undefined, 10_000);
      expect(reason).toContain('GITHUB_PRIVATE_KEY');
      expect(lines.filter((l) => l.msg.includes('not verified yet'))).toHaveLength(2);
    } finally {
      verification.stop();
      sim.clearFaults(fault.id);
    }
  });

  it('is ready when GitHub accepts the App, and waits for nothing in setup mode', async () => {
    const { logger, lines } = capturingLogger();
    const accepted = await verifyAppAtStart({
      credentials: credentials(),
      apiUrl: sim.apiUrl,
      mode: 'production',
      logger,
    });
    expect(accepted.notReadyReason()).toBeNull();
    expect(lines.map((l) => l.msg)).toEqual([
      `GitHub accepts App ${sim.app.id} (${sim.app.name}) and its key`,
    ]);
    accepted.stop();
    const setup = await verifyAppAtStart({
      credentials: null,
      apiUrl: sim.apiUrl,
      mode: 'production',
      logger,
    });
    expect(setup.notReadyReason()).toBeNull();
  });
});
