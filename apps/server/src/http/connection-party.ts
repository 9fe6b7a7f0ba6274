import type { Kysely } from 'kysely';
import type { Database, ServiceRow, SubscriptionRow } from '../store/schema.js';
import { getService } from '../store/services.js';
import { getSubscription } from '../store/subscriptions.js';
import { type Caller, isMemberOf } from './authenticate.js';

/**
 * Who is a party to a connection (a subscription) and to what travels on it: a member of the
 * provider's account (the service's) or of the consumer's. Either party may see the connection,
 * its deliveries and its recoveries, and replay; the routes answer "not found" to anyone else, so
 * a connection's existence never leaks to an outsider.
 */

/** Whether the caller is on the provider's side, the consumer's, or both (neither: not a party). */
export function sidesOf(
  caller: Caller,
  accounts: { providerAccountId: number | null; consumerAccountId: number },
): { asProvider: boolean; asConsumer: boolean } {
  return {
    asProvider: accounts.providerAccountId !== null && isMemberOf(caller, accounts.providerAccountId),
    asConsumer: isMemberOf(caller, accounts.consumerAccountId),
  };
}

/** A party to a delivery: a member of its provider or its consumer account. */
export function isPartyToDelivery(
  caller: Caller,
  delivery: { provider_account_id: number; consumer_account_id: number },
): boolean {
  const { asProvider, asConsumer } = sidesOf(caller, {
    providerAccountId: delivery.provider_account_id,
    consumerAccountId: delivery.consumer_account_id,
  });
  return asProvider || asConsumer;
}

export interface PartyConnection {
  subscription: SubscriptionRow;
  /** Its service; undefined when that row is gone (the caller is then a party as consumer only). */
  service: ServiceRow | undefined;
  asProvider: boolean;
  asConsumer: boolean;
}

/** The connection `id` and the caller's sides of it; undefined when there is none the caller is a party to. */
export async function partyConnection(
  db: Kysely<Database>,
  caller: Caller,
  id: string,
): Promise<PartyConnection | undefined> {
  const subscription = await getSubscription(db, id);
  if (!subscription) return undefined;
  const service = await getService(db, subscription.service_id);
  const sides = sidesOf(caller, {
    providerAccountId: service?.account_id ?? null,
    consumerAccountId: subscription.consumer_account_id,
  });
  if (!sides.asProvider && !sides.asConsumer) return undefined;
  return { subscription, service, ...sides };
}
