/**
 * Just enough of RFC 6265 for Zekt's two cookies: reading the `Cookie` header and writing
 * `Set-Cookie` with the attributes a session cookie must have.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index === -1) continue;
    if (part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
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
