import { describe, expect, it } from 'vitest';
import { createStatementBatch } from './statement-batches.js';

interface Input {
  key: string;
  value: number;
}

/**
 * Statements the test completes by hand: each `together` call is recorded with its inputs and
 * waits for `finish` (its results: each input's value doubled) or `fail`. `alone` answers at once,
 * failing for the values in `failsAlone`.
 */
function manualStatements(failsAlone: readonly number[] = []) {
  const sent: Array<{ inputs: Input[]; finish: () => void; fail: (error: Error) => void }> = [];
  const alone: Input[] = [];
  const batch = createStatementBatch<Input, number>({
    together: (inputs) =>
      new Promise((resolve, reject) => {
        sent.push({ inputs, finish: () => resolve(inputs.map((i) => i.value * 2)), fail: reject });
      }),
    alone: async (input) => {
      alone.push(input);
      if (failsAlone.includes(input.value)) throw new Error(`row ${input.value} is bad`);
      return input.value * 2;
    },
    keys: (input) => [input.key],
    maxBatch: 3,
    maxInFlight: 1,
  });
  return { batch, sent, alone };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Turns of the event loop until `sent` holds `count` statements (a statement's completion reaches the batch through a few promises). */
async function untilSent(sent: readonly unknown[], count: number): Promise<void> {
  for (let i = 0; i < 10 && sent.length < count; i++) await turn();
}

describe('statement batches', () => {
  it('sends the calls of one turn in one statement and answers each with its own result', async () => {
    const { batch, sent } = manualStatements();
    const answers = Promise.all([batch.run({ key: 'a', value: 1 }), batch.run({ key: 'b', value: 2 })]);
    await turn();
    expect(sent.map((s) => s.inputs.map((i) => i.value))).toEqual([[1, 2]]);
    sent[0]?.finish();
    expect(await answers).toEqual([2, 4]);
  });

  it('sends a key already in the statement in the next one, once the first has completed', async () => {
    const { batch, sent } = manualStatements();
    const answers = Promise.all([
      batch.run({ key: 'a', value: 1 }),
      batch.run({ key: 'b', value: 2 }),
      batch.run({ key: 'a', value: 3 }),
    ]);
    await turn();
    expect(sent.map((s) => s.inputs.map((i) => i.value))).toEqual([[1, 2]]);
    sent[0]?.finish();
    await untilSent(sent, 2);
    expect(sent.map((s) => s.inputs.map((i) => i.value))).toEqual([[1, 2], [3]]);
    sent[1]?.finish();
    expect(await answers).toEqual([2, 4, 6]);
  });

  it('puts at most maxBatch calls in a statement', async () => {
    const { batch, sent } = manualStatements();
    const answers = Promise.all([1, 2, 3, 4, 5].map((value) => batch.run({ key: `k${value}`, value })));
    await turn();
    sent[0]?.finish();
    await untilSent(sent, 2);
    sent[1]?.finish();
    expect(await answers).toEqual([2, 4, 6, 8, 10]);
    expect(sent.map((s) => s.inputs.length)).toEqual([3, 2]);
  });

  it('holds the calls made while maxInFlight statements are under way, and sends them together next', async () => {
    const { batch, sent } = manualStatements();
    const first = batch.run({ key: 'a', value: 1 });
    await turn();
    const later = [batch.run({ key: 'b', value: 2 }), batch.run({ key: 'c', value: 3 })];
    await turn();
    const during = [batch.run({ key: 'd', value: 4 })];
    await turn();
    // One statement under way: the three calls since wait for it.
    expect(sent).toHaveLength(1);
    sent[0]?.finish();
    expect(await first).toBe(2);
    await untilSent(sent, 2);
    expect(sent.map((s) => s.inputs.map((i) => i.value))).toEqual([[1], [2, 3, 4]]);
    sent[1]?.finish();
    expect(await Promise.all([...later, ...during])).toEqual([4, 6, 8]);
  });

  it('runs each call alone when the statement fails: one bad row fails no other', async () => {
    const { batch, sent, alone } = manualStatements([2]);
    const answers = Promise.allSettled([
      batch.run({ key: 'a', value: 1 }),
      batch.run({ key: 'b', value: 2 }),
      batch.run({ key: 'c', value: 3 }),
    ]);
    await turn();
    sent[0]?.fail(new Error('the statement failed'));
    const settled = await answers;
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      2,
      'row 2 is bad',
      6,
    ]);
    expect(alone.map((i) => i.value)).toEqual([1, 2, 3]);
  });

  it('drains: resolves once every call made so far has its answer', async () => {
    const { batch, sent } = manualStatements();
    const answered: number[] = [];
    void batch.run({ key: 'a', value: 1 }).then((v) => answered.push(v));
    void batch.run({ key: 'a', value: 2 }).then((v) => answered.push(v));
    const drained = batch.drain().then(() => [...answered]);
    // Completes each statement as it is sent.
    const finishing = (async () => {
      for (let i = 0; i < 2; i++) {
        await untilSent(sent, i + 1);
        sent[i]?.finish();
      }
    })();
    expect(await drained).toEqual([2, 4]);
    await finishing;
  });
});
