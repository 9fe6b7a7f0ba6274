import { generateKeyPairSync } from 'node:crypto';
import { createGitHubSimulator, type GitHubSimulator } from '../../src/index.js';
import type { SimulatorOptions } from '../../src/simulator-api.js';

const keys = new Map<'app' | 'oidc', string>();

/**
 * One RSA key for the App and one for the OIDC issuer per test process: generating a 2048-bit key
 * takes 50 ms to a second on a busy machine, and these suites start a simulator per test. The two
 * stay distinct, so a token signed with the one never verifies with the other. Generating a key when
 * none is given is the simulator's own behaviour, covered by its CLI test.
 */
function testKey(use: 'app' | 'oidc'): string {
  let key = keys.get(use);
  if (key === undefined) {
    key = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs1', format: 'pem' })
      .toString();
    keys.set(use, key);
  }
  return key;
}

/** A simulator with this process's test keys, unless the options bring their own. */
export function createTestSimulator(options: SimulatorOptions = {}): Promise<GitHubSimulator> {
  return createGitHubSimulator({
    ...options,
    oidcSigningKeyPem: options.oidcSigningKeyPem ?? testKey('oidc'),
    app: { ...options.app, privateKeyPem: options.app?.privateKeyPem ?? testKey('app') },
  });
}
