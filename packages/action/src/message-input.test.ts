import { describe, expect, it } from 'vitest';
import { checkPayload, describeEventTypeProblem, PAYLOAD_LIMIT_BYTES } from './message-input.js';

describe('checkPayload', () => {
  it('parses JSON and measures its serialization in UTF-8 bytes', () => {
    expect(checkPayload('{ "version" : "1.2.3" }')).toEqual({
      ok: true,
      value: { value: { version: '1.2.3' }, bytes: 19 },
    });
    expect(checkPayload('{"s":"é"}')).toMatchObject({ ok: true, value: { bytes: 10 } });
  });

  it('reads an empty input as {}', () => {
    expect(checkPayload('  ')).toEqual({ ok: true, value: { value: {}, bytes: 2 } });
  });

  it('accepts exactly 512 KB and refuses one byte more', () => {
    const at = JSON.stringify({ s: 'x'.repeat(PAYLOAD_LIMIT_BYTES - 8) });
    expect(checkPayload(at)).toMatchObject({ ok: true, value: { bytes: PAYLOAD_LIMIT_BYTES } });
    const over = JSON.stringify({ s: 'x'.repeat(PAYLOAD_LIMIT_BYTES - 7) });
    expect(checkPayload(over)).toEqual({
      ok: false,
      problem: expect.stringContaining('524289 bytes serialized'),
    });
  });

  it('measures the serialization, not the text: whitespace does not count', () => {
    const padded = `{"s":"${'x'.repeat(PAYLOAD_LIMIT_BYTES - 8)}"}${' '.repeat(1000)}`;
    expect(checkPayload(padded)).toMatchObject({ ok: true });
  });

  it('refuses text that is not JSON, saying where', () => {
    for (const text of ['{', 'version=1', "{'a':1}", '{"a":1,}', 'undefined']) {
      expect(checkPayload(text)).toEqual({
        ok: false,
        problem: expect.stringContaining('payload is not valid JSON'),
      });
    }
  });

  it('unwraps a JSON string that holds JSON, as the service does, and refuses one that does not', () => {
    expect(checkPayload(JSON.stringify('{"a":1}'))).toEqual({
      ok: true,
      value: { value: { a: 1 }, bytes: 7 },
    });
    expect(checkPayload('"deployed"')).toEqual({
      ok: false,
      problem: expect.stringContaining('Zekt reads a string payload as JSON text'),
    });
  });

  it('accepts any other JSON value', () => {
    for (const text of ['null', '42', 'true', '[1,2]']) expect(checkPayload(text).ok).toBe(true);
  });
});

describe('describeEventTypeProblem', () => {
  it('accepts GitHub-safe event types', () => {
    for (const type of ['acme-deployed', 'a', 'v1.2:done_ok', 'x'.repeat(100)]) {
      expect(describeEventTypeProblem(type)).toBeUndefined();
    }
  });

  it('says what is wrong with the others', () => {
    expect(describeEventTypeProblem('')).toContain('event-type is required');
    expect(describeEventTypeProblem('x'.repeat(101))).toContain('101 characters long');
    expect(describeEventTypeProblem('deploy done!')).toContain('(found " !")');
    expect(describeEventTypeProblem('déploiement')).toContain('(found "é")');
  });
});
