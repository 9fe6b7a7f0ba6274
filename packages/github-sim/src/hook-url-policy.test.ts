import { describe, expect, it } from 'vitest';
import { checkHookUrl } from './hook-url-policy.js';

describe('checkHookUrl', () => {
  it.each([
    ['https://hooks.example.com/github', { ok: true }],
    ['http://203.0.113.7:8080/x', { ok: true }],
    ['http://[2001:db8::1]/x', { ok: true }],
    ['http://localhost/x', { ok: false, reason: 'not-public', detail: 'localhost' }],
    ['http://LOCALHOST./x', { ok: false, reason: 'not-public', detail: 'localhost' }],
    ['http://127.1.2.3/x', { ok: false, reason: 'not-public', detail: 'localhost' }],
    ['http://2130706433/x', { ok: false, reason: 'not-public', detail: 'localhost' }],
    ['http://[::ffff:127.0.0.1]/x', { ok: false, reason: 'not-public', detail: 'localhost' }],
    ['http://[::1]/x', { ok: false, reason: 'not-public', detail: 'localhost' }],
    ['http://0.0.0.0/x', { ok: false, reason: 'not-public', detail: 'private network' }],
    [
      'http://169.254.169.254/latest/meta-data',
      { ok: false, reason: 'not-public', detail: 'private network' },
    ],
    ['http://100.64.0.1/x', { ok: false, reason: 'not-public', detail: 'private network' }],
    ['http://[fd00::1]/x', { ok: false, reason: 'not-public', detail: 'private network' }],
    ['http://[fe80::1]/x', { ok: false, reason: 'not-public', detail: 'private network' }],
    ['ftp://example.com/x', { ok: false, reason: 'invalid' }],
    ['example.com/hook', { ok: false, reason: 'invalid' }],
  ])('%s', (url, expected) => {
    expect(checkHookUrl(url)).toEqual(expected);
  });
});
