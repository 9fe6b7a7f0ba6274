import type { ZektDelivery } from './dispatch-event.js';
import type { AuthMethod } from './inputs.js';

/**
 * Who a consumer step is. By default the job's OIDC token: it proves the repository,
 * works for every delivery (durable or not) and needs only `permissions: id-token: write`. The
 * delivery's own token (`client_payload.zekt.token`, durable deliveries only) is used when the
 * workflow asks for it (`auth: delivery-token`), or as a fallback when no OIDC token can be had —
 * typically a job without `id-token: write` — so a durable delivery can still be confirmed and
 * completed; the step then says so in a warning.
 */
export interface ConsumerCredential {
  token: string;
  kind: 'oidc' | 'delivery-token';
}

export interface ConsumerAuthOptions {
  auth: AuthMethod;
  audience: string;
  delivery: ZektDelivery;
  getIdToken: (audience: string) => Promise<string>;
  warn: (message: string) => void;
}

export async function getConsumerCredential(options: ConsumerAuthOptions): Promise<ConsumerCredential> {
  const deliveryToken = options.delivery.token;
  if (options.auth === 'delivery-token') {
    if (!deliveryToken) {
      throw new Error(
        'auth: delivery-token, but this delivery carries no token (client_payload.zekt.token): only durable deliveries do. Use auth: oidc with permissions: id-token: write',
      );
    }
    return { token: deliveryToken, kind: 'delivery-token' };
  }
  try {
    return { token: await options.getIdToken(options.audience), kind: 'oidc' };
  } catch (error) {
    const reason = idTokenFailure(error);
    if (!deliveryToken) {
      throw new Error(
        `could not get the job's OIDC token (${reason}), and this delivery carries no token of its own: give the job permissions: id-token: write`,
        { cause: error },
      );
    }
    options.warn(
      `could not get the job's OIDC token (${reason}); using the delivery's token (client_payload.zekt.token) instead. Give the job permissions: id-token: write, or set auth: delivery-token to choose it explicitly`,
    );
    return { token: deliveryToken, kind: 'delivery-token' };
  }
}

/**
 * Why `core.getIDToken` failed, without the "Error message: " it puts in front.
 *
 * @example idTokenFailure(new Error('Error message: Unable to get ACTIONS_ID_TOKEN_REQUEST_URL env variable'))
 */
export function idTokenFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Error message: /, '').trim();
}
