import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { boundHeapGrowth, HEAP_GROWING_PERCENT, HEAP_GROWTH_FLAG } from './heap-growth.js';

/** The growing factors V8 applied at the full collections of a process that runs `script`. */
function growingFactors(script: string): string[] {
  const child = spawnSync(process.execPath, ['--trace-gc-verbose', '-e', script], { encoding: 'utf8' });
  // Node 20 (V8 11) prints the factor it applied after the limit, and before it the factor it
  // computed without the flag: "[HeapController] Limit: old size: 18045 KB, new limit: 43175 KB (1.5)".
  const applied = [...child.stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)];
  if (applied.length > 0) return applied.map((m) => m[1] as string);
  // Node 24 (V8 13) prints the factor it applies: "[HeapController] factor 1.5 based on mu=0.970, …".
  return [...child.stdout.matchAll(/\[HeapController\] factor ([\d.]+) based on/g)].map(
    (m) => m[1] as string,
  );
}

// Garbage that survives young collections, so that full collections run.
const CHURN =
  'const keep = []; for (let i = 0; i < 2000000; i++) { keep.push({ i, s: String(i) }); if (keep.length > 200000) keep.length = 0; }';

describe('boundHeapGrowth', () => {
  it('leaves a value the operator gave on the command line alone', () => {
    expect(boundHeapGrowth(['--heap-growing-percent=80'])).toBe(false);
    expect(boundHeapGrowth(['--heap_growing_percent=80'])).toBe(false);
  });

  it('sets a flag that V8 applies when set at run time, as zekt serve sets it', () => {
    expect(boundHeapGrowth([])).toBe(true);
    const bounded = growingFactors(`require('node:v8').setFlagsFromString('${HEAP_GROWTH_FLAG}');\n${CHURN}`);
    expect(bounded.length).toBeGreaterThan(0);
    expect(new Set(bounded)).toEqual(new Set([String(1 + HEAP_GROWING_PERCENT / 100)]));
    // Without it V8 chooses by itself, up to 4 ×: the bound is what changed the factor.
    expect(growingFactors(CHURN)).not.toContain(String(1 + HEAP_GROWING_PERCENT / 100));
  });
});
