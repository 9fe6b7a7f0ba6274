import { describe, expect, it } from 'vitest';
import { endpoint, type InputName, readInputs } from './inputs.js';

function read(inputs: Partial<Record<InputName, string>>, env: Record<string, string> = {}) {
  return readInputs((name) => inputs[name] ?? '', env);
}

describe('readInputs', () => {
  it('defaults to the message mode with the documented defaults', () => {
    expect(read({ 'zekt-api-url': 'https://zekt.example.com/', 'event-type': 'acme-deployed' })).toEqual({
      ok: true,
      inputs: {
        mode: 'message',
        apiUrl: new URL('https://zekt.example.com'),
        audience: 'api://zekt',
        retryBaseDelayMs: 1000,
        eventType: 'acme-deployed',
        payload: { value: {}, bytes: 2 },
      },
    });
  });

  it('reads the consumer modes', () => {
    const base = { 'zekt-api-url': 'https://zekt.example.com' };
    expect(read({ ...base, mode: 'confirm' })).toMatchObject({
      ok: true,
      inputs: { mode: 'confirm', auth: 'oidc' },
    });
    expect(read({ ...base, mode: 'complete', success: 'False', auth: 'delivery-token' })).toMatchObject({
      ok: true,
      inputs: { mode: 'complete', success: false, auth: 'delivery-token' },
    });
    expect(read({ ...base, mode: 'fetch-payload' }, { RUNNER_TEMP: '/runner/tmp' })).toMatchObject({
      ok: true,
      inputs: { mode: 'fetch-payload', path: '/runner/tmp/zekt-payload.json' },
    });
  });

  it('ignores message inputs in consumer modes', () => {
    expect(read({ 'zekt-api-url': 'https://z.example', mode: 'confirm', payload: '{' }).ok).toBe(true);
  });

  it('keeps a path prefix of the base URL', () => {
    const result = read({ 'zekt-api-url': 'https://example.com/zekt//', mode: 'confirm' });
    expect(result.ok && endpoint(result.inputs.apiUrl, '/api/event-delivery/confirm')).toBe(
      'https://example.com/zekt/api/event-delivery/confirm',
    );
  });

  it('reports every problem together', () => {
    const result = read({ mode: 'confirm', auth: 'pat', 'retry-base-delay-ms': '-5' });
    expect(result).toEqual({
      ok: false,
      problems: [
        expect.stringContaining('zekt-api-url is required'),
        expect.stringContaining('retry-base-delay-ms must be a whole number'),
        expect.stringContaining('auth must be one of oidc, delivery-token'),
      ],
    });
  });

  it('refuses URLs that are not a plain http(s) base URL', () => {
    for (const url of [
      'zekt.example.com',
      'ftp://zekt.example.com',
      'https://user:pw@zekt.example.com',
      'https://zekt.example.com/?x=1',
      'https://zekt.example.com/api/events/receive',
    ]) {
      expect(read({ 'zekt-api-url': url, mode: 'confirm' }).ok, url).toBe(false);
    }
  });
});
