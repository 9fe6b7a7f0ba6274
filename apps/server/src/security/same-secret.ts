import { timingSafeEqual } from 'node:crypto';

/** Constant-time equality of two secrets (a mismatch in length is still a plain mismatch). */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
