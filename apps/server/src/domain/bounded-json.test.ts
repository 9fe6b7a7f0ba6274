import { describe, expect, it } from 'vitest';
import { JsonTooDeepError, nestsDeeperThan, parseBoundedJson } from './bounded-json.js';

describe('bounded JSON', () => {
  it('measures nesting outside strings only', () => {
    expect(nestsDeeperThan('[[1]]', 2)).toBe(false);
    expect(nestsDeeperThan('[[[1]]]', 2)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[]}}', 3)).toBe(false);
    expect(nestsDeeperThan('["[[[[", "\\"[[[["]', 1)).toBe(false);
    expect(nestsDeeperThan('[1],[2],[3]', 1)).toBe(false);
  });

  it('parses what fits and refuses what does not, before parsing', () => {
    expect(parseBoundedJson('{"a":[1,{"b":2}]}', 3)).toEqual({ a: [1, { b: 2 }] });
    expect(() => parseBoundedJson(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64)).toThrow(
      JsonTooDeepError,
    );
    expect(() => parseBoundedJson('{', 64)).toThrow(SyntaxError);
  });
});
