import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redactLogObject } from './log-redaction.js';
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

  it("censors a secret of an error, a child logger's bindings and a request under `req`, and leaves the logged objects as they were", () => {
    const { logger, lines } = capture();
    const error = Object.assign(new Error('GitHub refused the call'), {
      token: 'ghs_on-the-error',
      status: 401,
    });
    const app = { id: 1, secret: 'webhook-secret-value' };
    const req = { method: 'GET', headers: { authorization: 'Bearer zekt_tok_abc', accept: '*/*' } };
    logger
      .child({ installation: { id: 3, token: 'ghs_bound-token' } })
      .error({ err: error, app, req }, 'failed');
    const [line] = lines();
    const text = JSON.stringify(line);
    for (const secret of ['ghs_on-the-error', 'webhook-secret-value', 'zekt_tok_abc', 'ghs_bound-token'])
      expect(text).not.toContain(secret);
    expect(line).toMatchObject({
      installation: { id: 3, token: '[redacted]' },
      err: { type: 'Error', message: 'GitHub refused the call', token: '[redacted]', status: 401 },
      app: { id: 1, secret: '[redacted]' },
      req: { method: 'GET', headers: { authorization: '[redacted]', accept: '*/*' } },
      msg: 'failed',
    });
    expect((line as { err: { stack: string } }).err.stack).toContain('GitHub refused the call');
    // The caller's objects still hold their values: only the line's copies are censored.
    expect(error.token).toBe('ghs_on-the-error');
    expect(error).toBeInstanceOf(Error);
    expect(app.secret).toBe('webhook-secret-value');
    expect(req.headers.authorization).toBe('Bearer zekt_tok_abc');
  });

  it('hands a line without a secret to pino as it is, without copying it', () => {
    const request = { method: 'POST', url: '/webhooks/github', headers: { 'x-github-event': 'ping' } };
    const line = {
      req: request,
      res: { statusCode: 202 },
      responseTime: 1.5,
      tokens: ['not', 'a', 'secret'],
    };
    const redacted = redactLogObject(line);
    expect(redacted).toBe(line);
    expect(redacted.req).toBe(request);
    expect(redactLogObject({ n: null, s: 'token', a: [{ secret: 'deeper than one level' }] })).toEqual({
      n: null,
      s: 'token',
      a: [{ secret: 'deeper than one level' }],
    });
  });
});
