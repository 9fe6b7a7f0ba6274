import { randomFillSync } from 'node:crypto';

/**
 * Identifiers. Deliveries use the seed's `delivery-<uuid>` form; everything else is a typed,
 * prefixed id (`evt_…`, `msg_…`, `sub_…`, `svc_…`). Both are built on UUIDv7, so ids sort by creation
 * time: cursor pagination can order by id alone.
 *
 * @example newId('evt') // 'evt_0193a6f0c1d27b3e9f4a8c2d1e0f5a6b'
 */
export type IdPrefix =
  | 'evt'
  | 'msg'
  | 'sub'
  | 'svc'
  | 'usr'
  | 'tok'
  | 'att'
  | 'hook'
  | 'aud'
  | 'rec'
  | 'alrt'
  | 'scv';

export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  return `${prefix}_${uuidV7(nowMs).replaceAll('-', '')}`;
}

/** `delivery-<uuid>`, the seed's DeliveryId format. */
export function newDeliveryId(nowMs: number = Date.now()): string {
  return `delivery-${uuidV7(nowMs)}`;
}

/**
 * The lowest id of a given kind made at `nowMs`: every id made before that millisecond sorts below
 * it, every one made at or after it does not. A range of the primary key is then a range of
 * creation times (the retention sweep reads expired rows that way, with no index on their time).
 */
export function firstIdAt(prefix: IdPrefix, nowMs: number): string {
  return `${prefix}_${firstUuidAt(nowMs).replaceAll('-', '')}`;
}

/** The lowest delivery id made at `nowMs` (see firstIdAt). */
export function firstDeliveryIdAt(nowMs: number): string {
  return `delivery-${firstUuidAt(nowMs)}`;
}

function firstUuidAt(nowMs: number): string {
  const time = Math.min(Math.max(0, Math.floor(nowMs)), 2 ** 48 - 1)
    .toString(16)
    .padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7000-8000-000000000000`;
}

export function isDeliveryId(value: string): boolean {
  return /^delivery-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value);
}

/** Random bytes are drawn from the system a page at a time: several ids are made per event. */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function randomSixteen(): Buffer {
  if (poolOffset + 16 > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  return bytes;
}

/** RFC 9562 UUID version 7: 48-bit Unix milliseconds, then random bits. */
export function uuidV7(nowMs: number = Date.now()): string {
  const bytes = randomSixteen();
  bytes.writeUIntBE(Math.min(Math.max(0, Math.floor(nowMs)), 2 ** 48 - 1), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
