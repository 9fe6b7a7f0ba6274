import { isIPv4, isIPv6 } from 'node:net';

export type HookUrlCheck =
  | { ok: true }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'not-public'; detail: 'localhost' | 'private network' };

function ipv4Octets(address: string): number[] {
  return address.split('.').map(Number);
}

/** Classifies an IPv4 address that GitHub could not reach from the public Internet. */
function privateIpv4(address: string): 'localhost' | 'private network' | null {
  const [a = 0, b = 0, c = 0] = ipv4Octets(address);
  if (a === 127) return 'localhost';
  if (
    a === 0 || // "this network"
    a === 10 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && c === 0) ||
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast and reserved
  ) {
    return 'private network';
  }
  return null;
}

function expandIpv6(address: string): number[] {
  let text = address;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1] !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Octets(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups];
  return groups.map((group) => Number.parseInt(group, 16));
}

function privateIpv6(address: string): 'localhost' | 'private network' | null {
  const groups = expandIpv6(address);
  const [g0 = 0, , , , , g5 = 0, g6 = 0, g7 = 0] = groups;
  const allZeroUntil = (n: number) => groups.slice(0, n).every((group) => group === 0);
  if (allZeroUntil(7) && g7 === 1) return 'localhost';
  if (allZeroUntil(8)) return 'private network';
  // IPv4-mapped (::ffff:a.b.c.d): judge the IPv4 address.
  if (allZeroUntil(5) && g5 === 0xffff) {
    return privateIpv4(`${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`);
  }
  if ((g0 & 0xfe00) === 0xfc00) return 'private network'; // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return 'private network'; // link-local fe80::/10
  if ((g0 & 0xff00) === 0xff00) return 'private network'; // multicast
  return null;
}

/**
 * Checks a hook URL the way github.com does: an http(s) URL whose host is reachable over the
 * public Internet. Hostnames are not resolved (the simulator makes no DNS lookups), so only
 * `localhost`, `*.localhost` and IP literals are recognised as private.
 */
export function checkHookUrl(url: string): HookUrlCheck {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') {
    return { ok: false, reason: 'invalid' };
  }
  // Brackets of IPv6 literals and the root label's trailing dot (`localhost.`) do not change the host.
  const host = parsed.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return { ok: false, reason: 'not-public', detail: 'localhost' };
  }
  const detail = isIPv4(host) ? privateIpv4(host) : isIPv6(host) ? privateIpv6(host) : null;
  return detail === null ? { ok: true } : { ok: false, reason: 'not-public', detail };
}
