import { randomBytes, randomInt, randomUUID } from 'node:crypto';

/**
 * A counter for one kind of GitHub id. It starts at a random point inside `[min, min + span)` so
 * two simulators started one after the other (against one persistent backend store) do not hand
 * out the same ids, and then counts up so ids stay unique within a simulator.
 */
export function createIdSequence(min: number, span: number): () => number {
  let next = min + randomInt(0, span);
  return () => next++;
}

/** The id sequences of one simulator, sized like GitHub's ids. */
export function createIdSequences() {
  return {
    account: createIdSequence(10_000_000, 80_000_000),
    // Above the id the simulator's own App has by default (1001).
    app: createIdSequence(100_000, 800_000),
    repository: createIdSequence(600_000_000, 300_000_000),
    installation: createIdSequence(40_000_000, 50_000_000),
    hook: createIdSequence(480_000_000, 100_000_000),
    workflow: createIdSequence(70_000_000, 20_000_000),
    // Run ids are ~10 digits, like GitHub's (e.g. 1589141559 is a 10-digit run id).
    run: createIdSequence(9_000_000_000, 900_000_000),
    checkSuite: createIdSequence(20_000_000_000, 9_000_000_000),
    dispatch: createIdSequence(1, 1),
    // Webhook delivery ids are ~11 digits (e.g. 12077215967); each attempt gets its own.
    webhookDelivery: createIdSequence(10_000_000_000, 80_000_000_000),
  };
}

export type IdSequences = ReturnType<typeof createIdSequences>;

/**
 * GitHub's legacy global node id: base64 of `0<type length>:<Type><id>`.
 *
 * @example legacyNodeId('Repository', 1296269) // 'MDEwOlJlcG9zaXRvcnkxMjk2MjY5'
 */
export function legacyNodeId(type: string, id: number): string {
  return Buffer.from(`0${type.length}:${type}${id}`).toString('base64');
}

/** A node id in GitHub's newer prefixed style, e.g. `WFR_kwLOABCD…`. */
export function prefixedNodeId(prefix: string): string {
  return `${prefix}_kw${randomBytes(9).toString('base64url')}`;
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(0, ALPHANUMERIC.length)];
  return out;
}

export function newGuid(): string {
  return randomUUID();
}
