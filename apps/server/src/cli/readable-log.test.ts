import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../zekt.js';
import { createReadableLogStream, formatLogLine } from './readable-log.js';

describe('readable log lines (zekt dev)', () => {
  it('puts time, level, component and message first, then the other fields', () => {
    const line = JSON.stringify({
      level: 40,
      time: Date.UTC(2026, 0, 2, 12, 4, 5),
      pid: 1,
      hostname: 'vm',
      component: 'dispatcher',
      msg: 'dispatch failed, retrying',
      deliveryId: 'dlv_1',
      status: 503,
      headers: { 'retry-after': '5' },
    });
    expect(formatLogLine(line)).toBe(
      '12:04:05  WARN   dispatcher  dispatch failed, retrying  deliveryId=dlv_1 status=503 headers={"retry-after":"5"}',
    );
  });

  it('shows an error with its stack, indented under the line', () => {
    const line = JSON.stringify({
      level: 50,
      time: 0,
      msg: 'store unavailable',
      err: { type: 'Error', message: 'gone', stack: 'Error: gone\n    at open (store.js:1:1)' },
    });
    expect(formatLogLine(line)).toBe(
      '00:00:00  ERROR  store unavailable\n    Error: gone\n        at open (store.js:1:1)',
    );
  });

  it('leaves anything that is not a pino line as it is', () => {
    expect(formatLogLine('plain text')).toBe('plain text');
    expect(formatLogLine('{"no":"level"}')).toBe('{"no":"level"}');
  });

  it('formats what the service logger writes, after its redaction, whole lines at a time', async () => {
    const written: string[] = [];
    const out = new Writable({
      write(chunk, _encoding, done) {
        written.push(String(chunk));
        done();
      },
    });
    const stream = createReadableLogStream(out);
    const logger = createLogger('info', stream);
    logger.child({ component: 'router' }).info({ hook: { secret: 'whsec_do_not_print' } }, 'hook placed');
    logger.debug('below the level');
    await new Promise<void>((done) => stream.end(done));
    const text = written.join('');
    expect(text).toMatch(
      /^\d\d:\d\d:\d\d {2}INFO {3}router {2}hook placed {2}hook=\{"secret":"\[redacted\]"\}\n$/,
    );
    expect(text).not.toContain('whsec_do_not_print');
  });
});
