import type { HttpLimits } from '../config.js';

/**
 * Node's own timeouts for every listener Zekt opens (the API's and the private metrics port):
 * headers must arrive within `ZEKT_REQUEST_TIMEOUT_MS` and a whole request within twice that, and
 * the server looks for late ones every second. They are the backstop for what the body guard
 * cannot see: headers sent slowly, or never finished.
 */
export function serverTimeouts(http: Pick<HttpLimits, 'requestTimeoutMs'>) {
  return {
    requestTimeout: 2 * http.requestTimeoutMs,
    http: {
      headersTimeout: http.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, http.requestTimeoutMs),
    },
  };
}
