import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { RawConnection, requestHead } from '../support/raw-http.js';

/**
 * Request logs carry no query strings (OAuth codes and states, tokens callers
 * put there), and a client hanging up is not logged as a database outage.
 */
let h: Harness;
const lines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  h = await startHarness({ logger: pino({ level: 'debug' }, sink) });
});
afterAll(async () => {
  await h.close();
});

describe('request logs', () => {
  it('leave query strings out', async () => {
    await fetch(`${h.url}/auth/callback?code=SECRETCODE123&state=SECRETSTATE456`, { redirect: 'manual' });
    await fetch(`${h.url}/api/v1/me?access_token=zkt_leakyleakyleaky`);
    await fetch(`${h.url}/healthz?token=ghs_alsosecret`);
    await eventually(() => (lines.some((l) => l.includes('/healthz')) ? true : undefined));
    const all = lines.join('\n');
    for (const secret of ['SECRETCODE123', 'SECRETSTATE456', 'zkt_leakyleakyleaky', 'ghs_alsosecret']) {
      expect(all).not.toContain(secret);
    }
    expect(all).toContain('/auth/callback');
  });

  it('log a client that hangs up mid-body as what it is, without a stack', async () => {
    const connection = await RawConnection.open(h.url);
    connection.write(
      requestHead('POST', '/webhooks/github', {
        host: '127.0.0.1',
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
        'content-length': 10_000,
      }),
    );
    connection.write('{"zen":');
    // Let the server start reading the body, then reset the connection.
    await eventually(() =>
      lines.some((l) => l.includes('"incoming request"') && l.includes('/webhooks/github'))
        ? true
        : undefined,
    );
    connection.socket.resetAndDestroy();
    const logged = await eventually(() => {
      const found = lines.filter((l) => /ECONNRESET|aborted|hung up|closed the connection/i.test(l));
      return found.length > 0 ? found : undefined;
    });
    const all = lines.join('\n');
    expect(all).not.toMatch(/database is unavailable/i);
    for (const line of logged) {
      const entry = JSON.parse(line) as { level: number; err?: { stack?: string } };
      expect(entry.level).toBeLessThan(40);
      expect(entry.err?.stack).toBeUndefined();
    }
  });
});

describe('refusals Zekt decides itself', () => {
  it('log a not-ready probe and a refused webhook in setup mode as one warning each, without a stack', async () => {
    const seen: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        seen.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const setup = await startHarness({ withoutApp: true, logger: pino({ level: 'info' }, sink) });
    try {
      expect((await setup.call('GET', '/readyz')).status).toBe(503);
      expect((await fetch(`${setup.url}/webhooks/github`, { method: 'POST', body: '{}' })).status).toBe(503);
      const warnings = await eventually(() => {
        const found = seen
          .map((line) => JSON.parse(line) as { level: number; code?: string; err?: unknown; msg: string })
          .filter((entry) => entry.level === 40);
        return found.length >= 2 ? found : undefined;
      });
      for (const warning of warnings) {
        expect(warning).toMatchObject({ code: 'setup_required', msg: expect.stringContaining('setup mode') });
        expect(warning.err).toBeUndefined();
      }
    } finally {
      await setup.close();
    }
  });
});
