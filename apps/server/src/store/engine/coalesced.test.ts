import { describe, expect, it } from 'vitest';
import { coalesced } from './coalesced.js';

/** A run the test finishes by hand, recording when each run started. */
function manualRuns() {
  const started: Array<{ finish: (error?: Error) => void }> = [];
  const run = () =>
    new Promise<void>((resolve, reject) => {
      started.push({ finish: (error) => (error ? reject(error) : resolve()) });
    });
  return { run, started };
}

const settledNow = async (promise: Promise<unknown>): Promise<boolean> => {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  // Several turns: a settled run reaches its callers through a chain of promises.
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return settled;
};

describe('coalesced', () => {
  it('answers callers that came during a run only after a run that started after them, one for all', async () => {
    const { run, started } = manualRuns();
    const call = coalesced(run);
    const first = call();
    expect(started).toHaveLength(1);
    const during = [call(), call(), call()];
    // No second run while one is under way.
    expect(started).toHaveLength(1);

    started[0]!.finish();
    await first;
    // The run they came during does not answer them: it may have started before what they need.
    expect(await settledNow(Promise.all(during))).toBe(false);
    expect(started).toHaveLength(2);

    started[1]!.finish();
    await Promise.all(during);
    expect(started).toHaveLength(2);
  });

  it('starts at once when idle, and runs again after a failure', async () => {
    const { run, started } = manualRuns();
    const call = coalesced(run);
    const failing = call();
    const waiting = call();
    started[0]!.finish(new Error('disk gone'));
    await expect(failing).rejects.toThrow('disk gone');
    // The caller that waited gets a run of its own, not the failed one's error.
    expect(started).toHaveLength(2);
    started[1]!.finish();
    await expect(waiting).resolves.toBeUndefined();

    const later = call();
    expect(started).toHaveLength(3);
    started[2]!.finish();
    await later;
  });
});
