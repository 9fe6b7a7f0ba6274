import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Setup mode's rows (migration 0012): the GitHub App registered through setup, sealed; the nonce
 * the setup code is derived from; setup sessions and manifest `state` values, both kept as SHA-256.
 */

/** The sealed credentials of the App registered through setup, if one was. */
export function readStoredApp(
  db: Kysely<Database>,
): Promise<{ sealed: string; registered_at: number } | undefined> {
  return db
    .selectFrom('app_credentials')
    .select(['sealed', 'registered_at'])
    .where('slot', '=', 'github_app')
    .executeTakeFirst();
}

/**
 * Stores the App's sealed credentials unless an App is stored already (two setups finishing
 * together: the first wins). True when this one was stored.
 */
export async function insertStoredApp(db: Kysely<Database>, sealed: string, now: number): Promise<boolean> {
  const result = await db
    .insertInto('app_credentials')
    .values({ slot: 'github_app', sealed, registered_at: now })
    .onConflict((oc) => oc.column('slot').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** The setup code's nonce: `candidate` if there was none yet, else the one stored (first writer wins). */
export async function setupCodeNonce(db: Kysely<Database>, candidate: string, now: number): Promise<string> {
  await db
    .insertInto('setup_codes')
    .values({ slot: 'setup', nonce: candidate, created_at: now })
    .onConflict((oc) => oc.column('slot').doNothing())
    .execute();
  const row = await db
    .selectFrom('setup_codes')
    .select('nonce')
    .where('slot', '=', 'setup')
    .executeTakeFirst();
  if (row === undefined) throw new Error('the setup code nonce vanished after it was stored');
  return row.nonce;
}

/** The stored nonce, or undefined when no setup code was ever printed (or the last was used up). */
export async function readSetupCodeNonce(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db
    .selectFrom('setup_codes')
    .select('nonce')
    .where('slot', '=', 'setup')
    .executeTakeFirst();
  return row?.nonce;
}

/** Forgets the nonce: the printed setup code stops working (the App is registered). */
export async function deleteSetupCode(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('setup_codes').where('slot', '=', 'setup').execute();
}

/** Starts a setup session; expired sessions and states are removed on the way (they are few). */
export async function createSetupSession(
  db: Kysely<Database>,
  session: { sessionHash: string; expiresAt: number },
  now: number,
): Promise<void> {
  await db.deleteFrom('setup_sessions').where('expires_at', '<=', now).execute();
  await db.deleteFrom('setup_states').where('expires_at', '<=', now).execute();
  await db
    .insertInto('setup_sessions')
    .values({ session_hash: session.sessionHash, created_at: now, expires_at: session.expiresAt })
    .execute();
}

export async function isLiveSetupSession(
  db: Kysely<Database>,
  sessionHash: string,
  now: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('setup_sessions')
    .select('session_hash')
    .where('session_hash', '=', sessionHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

export async function createSetupState(
  db: Kysely<Database>,
  state: { stateHash: string; sessionHash: string; expiresAt: number },
  now: number,
): Promise<void> {
  await db
    .insertInto('setup_states')
    .values({
      state_hash: state.stateHash,
      session_hash: state.sessionHash,
      created_at: now,
      expires_at: state.expiresAt,
      used_at: null,
    })
    .execute();
}

/**
 * Uses up a `state`, in one statement: only one that exists, belongs to this setup session, was
 * never used and has not expired. True when it was; whichever of those failed, false.
 */
export async function useSetupState(
  db: Kysely<Database>,
  state: { stateHash: string; sessionHash: string },
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('setup_states')
    .set({ used_at: now })
    .where('state_hash', '=', state.stateHash)
    .where('session_hash', '=', state.sessionHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Whether the App is installed on any account now: the setup page then offers the login. */
export async function hasInstallations(db: Kysely<Database>): Promise<boolean> {
  const row = await db
    .selectFrom('accounts')
    .select('account_id')
    .where('uninstalled_at', 'is', null)
    .where('installation_id', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
