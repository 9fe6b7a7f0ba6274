import { describe, expect, it } from 'vitest';
import { newRequestId } from './request-tracking.js';

describe('newRequestId', () => {
  it("has GitHub's shape (4:4:6:6:8 upper-case hex digits) and differs from one request to the next", () => {
    const ids = Array.from({ length: 200 }, newRequestId);
    for (const id of ids) expect(id).toMatch(/^[0-9A-F]{4}:[0-9A-F]{4}:[0-9A-F]{6}:[0-9A-F]{6}:[0-9A-F]{8}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
