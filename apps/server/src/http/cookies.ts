import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Zekt's cookies: the console session, the login's `state` and the setup session. @fastify/cookie
 * (registered in app.ts) parses the `Cookie` header of every request; `Set-Cookie` is written here,
 * in the attribute order Zekt has always sent (`Path`, `Max-Age`, `HttpOnly`, `SameSite`, `Secure`),
 * which the plugin's serializer would change.
 */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  return request.cookies[name];
}

export interface CookieOptions {
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  secure: boolean;
  path?: string;
}

/** HttpOnly (no script reads it) and SameSite=Lax (no cross-site POST carries it), always. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  return [
    `${name}=${value}`,
    `Path=${options.path ?? '/'}`,
    `Max-Age=${options.maxAge}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

/** Adds a cookie to the answer: Fastify appends each `Set-Cookie`, so several stand side by side. */
export function setCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  options: CookieOptions,
): FastifyReply {
  return reply.header('set-cookie', serializeCookie(name, value, options));
}
