/** Delivery ids are never empty: this one pads lists of ids. */
export const NO_DELIVERY = '';

/** GitHub account ids are positive: this one pads lists of accounts. */
export const NO_ACCOUNT = -1;

/** `items` padded to a power of two with `filler`: one compiled statement per size, not per length. */
export function padded<T>(items: readonly T[], filler: T): T[] {
  if (items.length === 0) return [];
  let size = 1;
  while (size < items.length) size *= 2;
  return [...items, ...Array.from({ length: size - items.length }, () => filler)];
}
