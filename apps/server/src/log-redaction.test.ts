import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './zekt.js';

/** The service's logger writing into memory: one parsed object per line. */
function capture(): { logger: ReturnType<typeof createLogger>; lines: () => Array<Record<string, unknown>> } {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  const logger = createLogger('info', sink as never);
  return {
    logger,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('log redaction', () => {
  it('keeps credentials out of a line even when a request or an object is logged whole', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        req: {
          method: 'POST',
          headers: {
            authorization: 'Bearer zekt_tok_secret-value',
            'x-hub-signature-256': 'sha256=abc',
            'x-hub-signature': 'sha1=def',
            'x-github-event': 'workflow_run',
          },
        },
        app: { id: 1, secret: 'webhook-secret-value', privateKey: '-----BEGIN RSA PRIVATE KEY-----' },
        installation: { id: 2, token: 'ghs_installation-token' },
      },
      'a request logged whole',
    );
    const [line] = lines();
    const text = JSON.stringify(line);
    for (const secret of [
      'zekt_tok_secret-value',
      'sha256=abc',
      'sha1=def',
      'webhook-secret-value',
      'BEGIN RSA PRIVATE KEY',
      'ghs_installation-token',
    ])
      expect(text).not.toContain(secret);
    expect(line).toMatchObject({
      req: {
        method: 'POST',
        headers: {
          authorization: '[redacted]',
          'x-hub-signature-256': '[redacted]',
          'x-hub-signature': '[redacted]',
          'x-github-event': 'workflow_run',
        },
      },
      app: { id: 1, secret: '[redacted]', privateKey: '[redacted]' },
      installation: { id: 2, token: '[redacted]' },
      msg: 'a request logged whole',
    });
  });
});
