import { randomBytes } from 'node:crypto';

/**
 * Identifiers. Deliveries use the seed's `delivery-<uuid>` form; everything else is a typed,
 * prefixed id (`evt_…`, `msg_…`, `sub_…`, `svc_…`). Both are built on UUIDv7, so ids sort by creation
 * time: cursor pagination can order by id alone.
 *
 * @example newId('evt') // 'evt_0193a6f0c1d27b3e9f4a8c2d1e0f5a6b'
 */
export type IdPrefix = 'evt' | 'msg' | 'sub' | 'svc' | 'usr' | 'tok' | 'att' | 'hook';

export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  return `${prefix}_${uuidV7(nowMs).replaceAll('-', '')}`;
}

/** `delivery-<uuid>`, the seed's DeliveryId format. */
export function newDeliveryId(nowMs: number = Date.now()): string {
  return `delivery-${uuidV7(nowMs)}`;
}

export function isDeliveryId(value: string): boolean {
  return /^delivery-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value);
}

/** RFC 9562 UUID version 7: 48-bit Unix milliseconds, then random bits. */
export function uuidV7(nowMs: number = Date.now()): string {
  const bytes = randomBytes(16);
  const ms = BigInt(Math.max(0, Math.floor(nowMs)));
  for (let i = 0; i < 6; i++) {
    bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
