import { describe, expect, it } from 'vitest';
import { generateApiToken, hashApiToken, looksLikeApiToken } from './api-tokens.js';
import { createDeliveryTokens } from './delivery-token.js';
import { createSecretBox } from './secret-box.js';

const SECRET = 'a'.repeat(64);

describe('secret box', () => {
  it('round-trips, never stores the plaintext, and refuses tampering or another key', () => {
    const box = createSecretBox(SECRET);
    const sealed = box.seal('hook-secret-123');
    expect(sealed).not.toContain('hook-secret-123');
    expect(sealed.startsWith('v1.')).toBe(true);
    expect(box.open(sealed)).toBe('hook-secret-123');
    expect(box.seal('x')).not.toBe(box.seal('x'));
    const [v, iv, ct, tag] = sealed.split('.');
    const flipped = `${v}.${iv}.${ct!.slice(0, -2)}${ct!.endsWith('AA') ? 'AB' : 'AA'}.${tag}`;
    expect(() => box.open(flipped)).toThrow(/ZEKT_SECRET/);
    expect(() => createSecretBox('b'.repeat(64)).open(sealed)).toThrow(/ZEKT_SECRET/);
    expect(() => box.open('garbage')).toThrow(/format/);
  });
});

describe('delivery tokens', () => {
  it('are bound to one delivery and one secret', () => {
    const tokens = createDeliveryTokens(SECRET);
    const token = tokens.issue('delivery-1');
    expect(tokens.verify('delivery-1', token)).toBe(true);
    expect(tokens.verify('delivery-2', token)).toBe(false);
    expect(tokens.verify('delivery-1', `${token}x`)).toBe(false);
    expect(createDeliveryTokens('c'.repeat(64)).verify('delivery-1', token)).toBe(false);
  });
});

describe('API tokens', () => {
  it('have a recognisable shape and are stored as a hash', () => {
    const token = generateApiToken();
    expect(looksLikeApiToken(token)).toBe(true);
    expect(looksLikeApiToken('zkt_short')).toBe(false);
    expect(hashApiToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiToken(token)).not.toBe(hashApiToken(generateApiToken()));
  });
});
