import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator } from './index.js';

let sim: GitHubSimulator;
beforeAll(async () => {
  sim = await createTestSimulator();
});
afterAll(async () => {
  await sim.close();
});

const senderOf = async (org: string, login: string) => {
  const change = await sim.createInstallation({
    account: { login: org, type: 'Organization' },
    repositories: ['r'],
    sender: { login },
  });
  return (
    (change.delivery?.payload as { sender: { id: number; login: string } } | undefined)?.sender ?? {
      id: change.installation.account.id,
      login,
    }
  );
};

describe('renaming an account', () => {
  it('keeps its id, frees its login, and a later user of the login is someone else', async () => {
    const before = await senderOf('one', 'alice');
    sim.renameAccount('alice', 'alice-renamed');
    const renamed = await senderOf('two', 'alice-renamed');
    const newcomer = await senderOf('three', 'alice');
    expect(renamed.id).toBe(before.id);
    expect(newcomer.login).toBe('alice');
    expect(newcomer.id).not.toBe(before.id);
    expect(() => sim.renameAccount('alice', 'alice-renamed')).toThrow(/another account/);
    expect(() => sim.renameAccount('nobody-here', 'x')).toThrow(/no account/);
  });

  it('through the control API', async () => {
    const rename = (login: string, body: unknown) =>
      fetch(`${sim.url}/_sim/accounts/${login}/rename`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await rename('alice-renamed', { login: 'alice-again' })).status).toBe(204);
    expect((await rename('alice-again', {})).status).toBe(400);
    expect((await rename('nobody-here', { login: 'x' })).status).toBe(404);
  });
});
