import { describe, expect, it } from 'vitest';
import {
  containersDeeperThan,
  JsonTooDeepError,
  nestsDeeperThan,
  parseBoundedJson,
  tooDeepToParse,
} from './bounded-json.js';

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

  it('measures a parsed value as the scan measures its text', () => {
    const documents = [
      '1',
      '[]',
      '[[1]]',
      '{"a":{"b":[]}}',
      '[1,[2],[[3]]]',
      '{"a":"[[[[","b":[{"c":null}]}',
    ];
    for (const text of documents) {
      for (const maxDepth of [0, 1, 2, 3]) {
        expect(containersDeeperThan(JSON.parse(text), maxDepth), `${text} at ${maxDepth}`).toBe(
          nestsDeeperThan(text, maxDepth),
        );
      }
    }
    // Past the recursive levels, on an explicit stack: exact across the switch, and the deepest
    // bound allowed (10,000 levels) is measured without a stack overflow.
    const nested = (levels: number) => JSON.parse(`${'[{"a":'.repeat(levels)}1${'}]'.repeat(levels)}`);
    expect(containersDeeperThan(nested(150), 299)).toBe(true);
    expect(containersDeeperThan(nested(150), 300)).toBe(false);
    const deep = JSON.parse(`${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    expect(containersDeeperThan(deep, 10_000)).toBe(true);
    expect(containersDeeperThan(deep, 20_000)).toBe(false);
  });

  it('parses what fits and refuses what does not', () => {
    expect(parseBoundedJson('{"a":[1,{"b":2}]}', 3)).toEqual({ a: [1, { b: 2 }] });
    // Few brackets: parsed, then measured.
    expect(() => parseBoundedJson('{"a":[1,{"b":[2]}]}', 3)).toThrow(JsonTooDeepError);
    expect(() => parseBoundedJson(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64)).toThrow(
      JsonTooDeepError,
    );
    expect(() => parseBoundedJson('{', 64)).toThrow(SyntaxError);
  });

  it('refuses a text with brackets enough to be slow to parse without parsing it', () => {
    // Unparseable past its depth: only the scan can have refused it.
    const deepThenBroken = `${'['.repeat(5_000)}oops`;
    expect(tooDeepToParse(deepThenBroken, 64)).toBe(true);
    expect(() => parseBoundedJson(deepThenBroken, 64)).toThrow(JsonTooDeepError);
    // Few brackets: left to the parse, whatever its depth.
    expect(tooDeepToParse(`${'['.repeat(100)}`, 64)).toBe(false);
    // Many brackets, all in strings or side by side: parsed as usual.
    const flat = JSON.stringify({
      urls: Array.from({ length: 3_000 }, (_, i) => `{/x}${i}`),
      list: Array(2_000).fill([]),
    });
    expect(tooDeepToParse(flat, 8)).toBe(false);
    expect(parseBoundedJson(flat, 8)).toEqual(JSON.parse(flat));
  });
});
