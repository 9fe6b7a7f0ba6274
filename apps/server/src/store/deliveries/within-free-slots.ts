import type { ClaimOptions } from './claim-options.js';

/**
 * The deliveries a claim takes of those due, oldest first: at most `limit`, and no more of one
 * installation's than its free slots (`perInstallation` less what the worker has `inFlight`).
 * PostgreSQL's claim applies the same rule in SQL (`rank <= cap - used`).
 */
export function withinFreeSlots<T extends { consumer_account_id: number }>(
  due: readonly T[],
  options: Pick<ClaimOptions, 'limit' | 'perInstallation' | 'inFlight'>,
): T[] {
  const taken = new Map<number, number>();
  const chosen: T[] = [];
  for (const row of due) {
    if (chosen.length >= options.limit) break;
    const account = row.consumer_account_id;
    const used = taken.get(account) ?? options.inFlight?.get(account) ?? 0;
    if (options.perInstallation !== undefined && used >= options.perInstallation) continue;
    taken.set(account, used + 1);
    chosen.push(row);
  }
  return chosen;
}
