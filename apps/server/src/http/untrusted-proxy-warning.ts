import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/**
 * Warns once, at the first request that carries `X-Forwarded-For`, when `ZEKT_TRUST_PROXY` is off.
 * Behind a reverse proxy or load balancer that setting tells Zekt whose `X-Forwarded-For` names the
 * client; without it every client is the proxy's address, and the failed-authentication limit,
 * counted per client address, then locks every client out as soon as anyone — a stranger guessing
 * tokens — has failed `ZEKT_AUTH_FAILURE_LIMIT` times. Nothing else tells the operator: the header
 * is the one sign, and it is free to read. Once per process, so a busy proxy does not flood the log.
 */
export function warnOfUntrustedProxy(
  app: FastifyInstance,
  options: { trustProxy: boolean | string[]; logger: Pick<Logger, 'warn'> },
): void {
  if (options.trustProxy !== false) return;
  let warned = false;
  app.addHook('onRequest', async (request) => {
    if (warned || request.headers['x-forwarded-for'] === undefined) return;
    warned = true;
    options.logger.warn(
      { client: request.ip, setting: 'ZEKT_TRUST_PROXY' },
      `requests arrive with X-Forwarded-For but ZEKT_TRUST_PROXY is off, so every client looks like ${request.ip}: ` +
        'failed authentications from anyone then count against all clients, and ZEKT_AUTH_FAILURE_LIMIT of them lock everyone out of the API. ' +
        'Behind a reverse proxy or load balancer, set ZEKT_TRUST_PROXY to its addresses (for example ZEKT_TRUST_PROXY=10.0.0.0/8), ' +
        'or to true when nothing but the proxy can reach Zekt; without a proxy, a client sends the header itself and it is ignored (this is said once)',
    );
  });
}
