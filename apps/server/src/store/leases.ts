import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Named leases: work that only one process of a deployment may do at a time (placing a
 * repository's hooks). A lease has an owner and an expiry, so a process that dies holding one
 * only delays the next holder until it expires.
 */

/** Takes the lease when it is free or expired; true when `owner` now holds it. */
export async function tryAcquireLease(
  db: Kysely<Database>,
  lease: { name: string; owner: string; ttlMs: number },
  now: number,
): Promise<boolean> {
  const row = await db
    .insertInto('leases')
    .values({ name: lease.name, owner: lease.owner, expires_at: now + lease.ttlMs })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet((eb) => ({ owner: eb.ref('excluded.owner'), expires_at: eb.ref('excluded.expires_at') }))
        .where('leases.expires_at', '<', now),
    )
    .returning('owner')
    .executeTakeFirst();
  return row?.owner === lease.owner;
}

export async function releaseLease(db: Kysely<Database>, name: string, owner: string): Promise<void> {
  await db.deleteFrom('leases').where('name', '=', name).where('owner', '=', owner).execute();
}

/** Same-process callers wait in line here, so they never poll the store against each other. */
const localQueues = new Map<string, Promise<unknown>>();

/**
 * Runs `work` while holding the lease `name`: callers of this process one after another, other
 * processes kept out by the lease in the store (polled until it is free, up to `waitMs`). Resolves
 * to `{ acquired: false }` when the lease stayed taken that long.
 */
export async function withLease<T>(
  db: Kysely<Database>,
  lease: { name: string; owner: string; ttlMs: number; waitMs: number; now: () => number },
  work: () => Promise<T>,
): Promise<{ acquired: true; value: T } | { acquired: false }> {
  const previous = localQueues.get(lease.name) ?? Promise.resolve();
  const turn = previous.then(
    () => undefined,
    () => undefined,
  );
  const run = turn.then(async () => {
    const deadline = Date.now() + lease.waitMs;
    while (!(await tryAcquireLease(db, lease, lease.now()))) {
      if (Date.now() > deadline) return { acquired: false as const };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    try {
      return { acquired: true as const, value: await work() };
    } finally {
      await releaseLease(db, lease.name, lease.owner);
    }
  });
  localQueues.set(lease.name, run);
  try {
    return await run;
  } finally {
    if (localQueues.get(lease.name) === run) localQueues.delete(lease.name);
  }
}
