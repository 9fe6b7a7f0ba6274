/**
 * JSON with a bound on nesting. `JSON.parse` itself copes with any depth, but everything after it
 * that walks a document recursively (`JSON.stringify`, schema validation, the serialisers) runs out
 * of stack somewhere between a few thousand and ten thousand levels; no real document comes close
 * to the bound, so a deeper one is refused before anything walks it.
 */
export class JsonTooDeepError extends Error {
  override readonly name = 'JsonTooDeepError';
  constructor(readonly maxDepth: number) {
    super(`the JSON document nests arrays and objects deeper than ${maxDepth} levels`);
  }
}

/**
 * The deepest nesting of `text` exceeds `maxDepth`: one pass over the characters, jumping over
 * each string with `indexOf` (most of a webhook's bytes are inside strings: URLs, names, messages;
 * character by character this pass cost twice what `JSON.parse` costs on an 18 KB webhook, now
 * half; only a text with many brackets takes it, `PARSE_FIRST_OPENERS`). A quote ends the string
 * unless an odd number of backslashes precede it. Malformed JSON is left to `JSON.parse` to report.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = closingQuote(text, i);
      if (end === -1) return false;
      i = end;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/** Where the string opened at `open` ends (-1: it does not). */
function closingQuote(text: string, open: number): number {
  let quote = open;
  for (;;) {
    quote = text.indexOf('"', quote + 1);
    if (quote === -1) return -1;
    let backslash = quote - 1;
    while (text.charCodeAt(backslash) === 0x5c /* \ */) backslash--;
    if ((quote - 1 - backslash) % 2 === 0) return quote;
  }
}

/**
 * Opening brackets up to which a document is parsed before its depth is measured. Measuring the
 * parsed value costs a sixth of scanning the text (2.5 against 14–21 µs on an 18 KB webhook, whose
 * `JSON.parse` takes 30–47 µs), but `JSON.parse` slows down with depth (a million levels take half a
 * second, two hundred times the cost of as many bytes of a flat document): a text with more
 * brackets than this, which could be that deep, is scanned first and refused unparsed.
 */
const PARSE_FIRST_OPENERS = 4096;

/**
 * `JSON.parse`, refusing documents nested deeper than `maxDepth` (JsonTooDeepError). A document
 * that is both too deep and malformed gets either error.
 *
 * @example parseBoundedJson('[[1]]', 64) // [[1]]
 */
export function parseBoundedJson(text: string, maxDepth: number): unknown {
  if (tooDeepToParse(text, maxDepth)) throw new JsonTooDeepError(maxDepth);
  const value: unknown = JSON.parse(text);
  if (containersDeeperThan(value, maxDepth)) throw new JsonTooDeepError(maxDepth);
  return value;
}

/**
 * What to check before parsing: `text` has enough brackets to be slow to parse
 * (`PARSE_FIRST_OPENERS`), and its scan finds it nested deeper than `maxDepth`. A text that passes
 * is parsed, and its value measured (`containersDeeperThan`).
 */
export function tooDeepToParse(text: string, maxDepth: number): boolean {
  return !opensAtMost(text, PARSE_FIRST_OPENERS) && nestsDeeperThan(text, maxDepth);
}

/** `text` holds at most `limit` of `{` and `[` (strings included: an overcount only costs a scan). */
function opensAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const opener of ['{', '[']) {
    for (let at = text.indexOf(opener); at !== -1; at = text.indexOf(opener, at + 1)) {
      if (++count > limit) return false;
    }
  }
  return true;
}

/**
 * The parsed value nests arrays and objects deeper than `maxDepth`, as `nestsDeeperThan` counts
 * them in its text. Recursive for the first `RECURSIVE_LEVELS` levels (a fifth of the cost of an
 * explicit stack on a webhook), with an explicit stack below them: the bound may be set to
 * 10,000 levels, more than a call stack is sure to hold.
 */
export function containersDeeperThan(value: unknown, maxDepth: number): boolean {
  return deeperFrom(value, 1, maxDepth);
}

const RECURSIVE_LEVELS = 256;

function deeperFrom(value: unknown, depth: number, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth > maxDepth) return true;
  if (depth >= RECURSIVE_LEVELS) return deeperWithStack(value, depth, maxDepth);
  if (Array.isArray(value)) {
    for (const item of value) if (deeperFrom(item, depth + 1, maxDepth)) return true;
  } else {
    const object = value as Record<string, unknown>;
    for (const key in object) if (deeperFrom(object[key], depth + 1, maxDepth)) return true;
  }
  return false;
}

function deeperWithStack(value: object, depth: number, maxDepth: number): boolean {
  const pending: object[] = [value];
  const depths: number[] = [depth];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    const at = depths.pop() as number;
    if (at > maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) {
        pending.push(child);
        depths.push(at + 1);
      }
    }
  }
  return false;
}
