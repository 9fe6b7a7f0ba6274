import { describe, expect, it } from 'vitest';
import { JsonTooDeepError, nestsDeeperThan, parseBoundedJson } from './bounded-json.js';

describe('bounded JSON', () => {
  it('measures nesting outside strings only', () => {
    expect(nestsDeeperThan('[[1]]', 2)).toBe(false);
    expect(nestsDeeperThan('[[[1]]]', 2)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[]}}', 3)).toBe(false);
    expect(nestsDeeperThan('["[[[[", "\\"[[[["]', 1)).toBe(false);
    expect(nestsDeeperThan('[1],[2],[3]', 1)).toBe(false);
    expect(nestsDeeperThan('["\\\\", [[1]]]', 2)).toBe(true);
    expect(nestsDeeperThan('["\\\\\\"[[", 1]', 1)).toBe(false);
  });

  it('agrees with a character-by-character scan on any mix of brackets, quotes and backslashes', () => {
    // The reference: the plain scan the fast one replaced (a backslash in a string skips one character).
    const reference = (text: string, maxDepth: number): boolean => {
      let depth = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === '\\') i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '[' || c === '{') {
          if (++depth > maxDepth) return true;
        } else if (c === ']' || c === '}') depth--;
      }
      return false;
    };
    const alphabet = '[]{}"\\a';
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      for (let i = Math.floor(random() * 24); i > 0; i--)
        text += alphabet[Math.floor(random() * alphabet.length)];
      for (const maxDepth of [0, 1, 2, 3]) {
        expect(nestsDeeperThan(text, maxDepth), `${JSON.stringify(text)} at ${maxDepth}`).toBe(
          reference(text, maxDepth),
        );
      }
    }
  });

  it('parses what fits and refuses what does not, before parsing', () => {
    expect(parseBoundedJson('{"a":[1,{"b":2}]}', 3)).toEqual({ a: [1, { b: 2 }] });
    expect(() => parseBoundedJson(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64)).toThrow(
      JsonTooDeepError,
    );
    expect(() => parseBoundedJson('{', 64)).toThrow(SyntaxError);
  });
});
