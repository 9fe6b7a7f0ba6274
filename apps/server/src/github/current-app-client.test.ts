import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { GitHubSimulator } from 'zekt-github-sim';
import { createTestSimulator } from '../../../../packages/github-sim/test/support/test-simulator.js';
import type { DispatchBody, JsonText } from '../domain/client-payload.js';
import { type ClientCredentials, createCurrentAppClient, SETUP_MODE_MESSAGE } from './current-app-client.js';

/**
 * The client of whichever App the process uses now. What matters across processes: a delivery's
 * call that finds the cached answer still "no App" (read just before another process registered
 * one) asks again, fresh, before it fails an attempt.
 */
let sim: GitHubSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const body: JsonText<DispatchBody> = JSON.stringify({
  event_type: 'zekt-test',
  client_payload: { zekt: { payload: { n: 1 } } },
});

/** Credentials as a live cache answers them: `cached` unless asked fresh, then `stored`. */
function credentialsSource(cached: ClientCredentials | null, stored: ClientCredentials | null) {
  const asked: Array<boolean> = [];
  return {
    asked,
    credentials: async (options?: { fresh?: boolean }) => {
      asked.push(options?.fresh === true);
      return options?.fresh ? stored : cached;
    },
  };
}

/** A simulator (closed after the test) with an installation on globex/app, and its App’s credentials. */
async function simulatedApp() {
  const simulator = await createTestSimulator();
  sim = simulator;
  const { installation } = await simulator.createInstallation({
    account: { login: 'globex' },
    repositories: ['app'],
  });
  const app: ClientCredentials = {
    appId: simulator.app.id,
    privateKey: simulator.app.privateKeyPem,
    clientId: null,
    clientSecret: null,
  };
  return { simulator, installation, app };
}

describe('the current App’s client', () => {
  it('dispatches as an App registered since the cached setup-mode answer, asking fresh once', async () => {
    const { simulator, installation, app } = await simulatedApp();
    const source = credentialsSource(null, app);
    const client = createCurrentAppClient({ credentials: source.credentials, apiUrl: simulator.apiUrl });

    const result = await client.dispatch({
      installationId: installation.id,
      owner: 'globex',
      repo: 'app',
      body,
      timeoutMs: 5_000,
    });
    expect(result.ok).toBe(true);
    expect(source.asked).toEqual([false, true]);
    expect(simulator.dispatches({ repository: 'globex/app' })).toHaveLength(1);
  });

  it('keeps one client, and its installation token, while the credentials stay the same', async () => {
    const { simulator, installation, app } = await simulatedApp();
    let answer: ClientCredentials = app;
    const client = createCurrentAppClient({ credentials: async () => answer, apiUrl: simulator.apiUrl });
    const dispatch = async () =>
      (
        await client.dispatch({
          installationId: installation.id,
          owner: 'globex',
          repo: 'app',
          body,
          timeoutMs: 5_000,
        })
      ).ok;
    const tokensIssued = () =>
      simulator.journal().filter((entry) => entry.method === 'POST' && entry.path.endsWith('/access_tokens'))
        .length;

    expect(await dispatch()).toBe(true);
    expect(await dispatch()).toBe(true);
    // A copy with the same App and key (a process re-reading the store) is the same App.
    answer = { ...app };
    expect(await dispatch()).toBe(true);
    expect(tokensIssued()).toBe(1);
    // Another key is another client: it asks for a token of its own (and is refused: the
    // simulator's App has the first key).
    answer = {
      ...app,
      privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs1', format: 'pem' })
        .toString(),
    };
    expect(await dispatch()).toBe(false);
    expect(tokensIssued()).toBe(2);
    expect(simulator.dispatches({ repository: 'globex/app' })).toHaveLength(3);
  });

  it('fails a delivery’s call as setup mode only when the fresh answer has no App either', async () => {
    const source = credentialsSource(null, null);
    const client = createCurrentAppClient({ credentials: source.credentials, apiUrl: 'http://127.0.0.1:9' });
    const target = { installationId: 1, owner: 'globex', repo: 'app', timeoutMs: 1_000 };

    expect(await client.dispatch({ ...target, body })).toMatchObject({
      ok: false,
      message: SETUP_MODE_MESSAGE,
    });
    expect(await client.readWorkflowRun({ ...target, runId: 1 })).toMatchObject({
      outcome: 'failed',
      message: SETUP_MODE_MESSAGE,
    });
    expect(source.asked).toEqual([false, true, false, true]);
    // Other calls do not pay for a fresh read: they throw at once in setup mode.
    await expect(
      client.listRepositoryHooks({ installationId: 1, owner: 'globex', repo: 'app' }),
    ).rejects.toThrow(/setup mode/);
    expect(source.asked).toHaveLength(5);
  });
});
