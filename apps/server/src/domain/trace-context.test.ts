import { describe, expect, it } from 'vitest';
import {
  attemptSpanId,
  childTraceparent,
  formatTraceparent,
  parseTraceparent,
  runSpanId,
  runTraceId,
} from './trace-context.js';

describe('trace context of a provider run', () => {
  const run = { repositoryId: 1296269, runId: 30433642, runAttempt: 1 };

  it('derives the trace id and the root span id from the run key alone, on any process', () => {
    expect(runTraceId(run)).toMatch(/^[0-9a-f]{32}$/);
    expect(runSpanId(run)).toMatch(/^[0-9a-f]{16}$/);
    expect(runTraceId({ ...run })).toBe(runTraceId(run));
    // A delivery names the run by its correlation id, which is the run id as text.
    expect(runTraceId({ ...run, runId: '30433642' })).toBe(runTraceId(run));
    expect(runSpanId({ ...run, runId: '30433642' })).toBe(runSpanId(run));
  });

  it('gives every part of the run key its own trace: another repository, run or attempt', () => {
    const ids = new Set([
      runTraceId(run),
      runTraceId({ ...run, repositoryId: 1296270 }),
      runTraceId({ ...run, runId: 30433643 }),
      runTraceId({ ...run, runAttempt: 2 }),
      // "12:34" and "1:234" must not collide through their text.
      runTraceId({ repositoryId: 12, runId: 34, runAttempt: 1 }),
      runTraceId({ repositoryId: 1, runId: 234, runAttempt: 1 }),
    ]);
    expect(ids.size).toBe(6);
    expect(runSpanId(run)).not.toBe(runTraceId(run).slice(0, 16));
  });

  it('derives distinct span ids for the attempts of a delivery', () => {
    const first = attemptSpanId('delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b', 1);
    expect(first).toMatch(/^[0-9a-f]{16}$/);
    expect(attemptSpanId('delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b', 1)).toBe(first);
    expect(attemptSpanId('delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b', 2)).not.toBe(first);
    expect(attemptSpanId('delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6c', 1)).not.toBe(first);
  });

  it('never derives an all-zero id over many run keys', () => {
    for (let runId = 1; runId <= 2000; runId++) {
      const key = { repositoryId: 7, runId, runAttempt: 1 };
      expect(runTraceId(key)).not.toMatch(/^0+$/);
      expect(runSpanId(key)).not.toMatch(/^0+$/);
    }
  });

  it('writes and reads W3C traceparent', () => {
    const context = { traceId: runTraceId(run), spanId: runSpanId(run), sampled: true };
    const text = formatTraceparent(context);
    expect(text).toBe(`00-${context.traceId}-${context.spanId}-01`);
    expect(parseTraceparent(text)).toEqual(context);
    expect(parseTraceparent(formatTraceparent({ ...context, sampled: false }))).toEqual({
      ...context,
      sampled: false,
    });
    // The W3C example, and a future version with more fields.
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      sampled: true,
    });
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03-extra')?.sampled).toBe(
      true,
    );
  });

  it('refuses what is not valid trace context', () => {
    for (const bad of [
      undefined,
      null,
      42,
      '',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01${'x'.repeat(600)}`,
    ]) {
      expect(parseTraceparent(bad), String(bad)).toBeNull();
    }
  });

  it('makes a child context under a stored parent, keeping its trace and sampling decision', () => {
    const parent = formatTraceparent({ traceId: runTraceId(run), spanId: runSpanId(run), sampled: false });
    const span = attemptSpanId('delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b', 1);
    expect(childTraceparent(parent, span)).toBe(`00-${runTraceId(run)}-${span}-00`);
    expect(childTraceparent(null, span)).toBeNull();
    expect(childTraceparent('garbage', span)).toBeNull();
  });
});
