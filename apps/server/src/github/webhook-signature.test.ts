import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { findSigningSecret, isValidSignature } from './webhook-signature.js';

const sign = (secret: string, body: Buffer) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('webhook signatures', () => {
  const body = Buffer.from('{"zen":"Keep it logically awesome.","emoji":"✨"}');

  it('accepts the signature over the exact bytes and nothing else', async () => {
    expect(await isValidSignature('s3cret', body, sign('s3cret', body))).toBe(true);
    expect(await isValidSignature('other', body, sign('s3cret', body))).toBe(false);
    expect(await isValidSignature('s3cret', Buffer.from(`${body} `), sign('s3cret', body))).toBe(false);
    expect(await isValidSignature('s3cret', body, undefined)).toBe(false);
    expect(await isValidSignature('s3cret', body, sign('s3cret', body).replace('sha256=', 'sha1='))).toBe(
      false,
    );
    expect(await isValidSignature('s3cret', body, 'sha256=abc')).toBe(false);
    expect(await isValidSignature('', body, sign('', body))).toBe(false);
    expect(await isValidSignature('s3cret', Buffer.alloc(0), sign('s3cret', Buffer.alloc(0)))).toBe(false);
  });

  it('refuses bodies that are not valid UTF-8 even when the HMAC matches', async () => {
    const invalid = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(await isValidSignature('s3cret', invalid, sign('s3cret', invalid))).toBe(false);
  });

  it('finds which candidate secret signed a body', async () => {
    expect(await findSigningSecret(['a', 'b', 'c'], body, sign('b', body))).toBe(1);
    expect(await findSigningSecret(['a', 'c'], body, sign('b', body))).toBe(-1);
  });
});
