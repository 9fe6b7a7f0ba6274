/**
 * JSON with a bound on nesting. `JSON.parse` itself copes with any depth, but everything after it
 * that walks a document recursively (`JSON.stringify`, schema validation, the serialisers) runs out
 * of stack somewhere between a few thousand and ten thousand levels; no real document comes close
 * to the bound, so a deeper one is refused before it is parsed.
 */
export class JsonTooDeepError extends Error {
  override readonly name = 'JsonTooDeepError';
  constructor(readonly maxDepth: number) {
    super(`the JSON document nests arrays and objects deeper than ${maxDepth} levels`);
  }
}

/**
 * The deepest nesting of `text` exceeds `maxDepth`: one pass over the characters, skipping the
 * insides of strings. Malformed JSON is left to `JSON.parse` to report.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/**
 * `JSON.parse`, refusing documents nested deeper than `maxDepth` (JsonTooDeepError).
 *
 * @example parseBoundedJson('[[1]]', 64) // [[1]]
 */
export function parseBoundedJson(text: string, maxDepth: number): unknown {
  if (nestsDeeperThan(text, maxDepth)) throw new JsonTooDeepError(maxDepth);
  return JSON.parse(text);
}
