/**
 * A Standard Webhooks receiver's check, written from the specification alone
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md,
 * "Verifying webhook authenticity") on WebCrypto, sharing nothing with Zekt's signer: the key is
 * the base64 after `whsec_`; the signed content is `id.timestamp.body`; `webhook-signature` is a
 * space-separated list of `v1,<base64>`, any of which may match; the timestamp must be within the
 * tolerance of now (replay protection).
 */
export async function verifyStandardWebhook(input: {
  secret: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  nowSeconds: number;
  toleranceSeconds?: number;
}): Promise<{ ok: true } | { ok: false; why: string }> {
  const header = (name: string) => {
    const value = input.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures) return { ok: false, why: 'a webhook-* header is missing' };
  if (!/^\d+$/.test(timestamp)) return { ok: false, why: 'webhook-timestamp is not a number' };
  if (Math.abs(input.nowSeconds - Number(timestamp)) > (input.toleranceSeconds ?? 300)) {
    return { ok: false, why: 'webhook-timestamp is outside the tolerance' };
  }
  const raw = Uint8Array.from(atob(input.secret.replace(/^whsec_/, '')), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const content = new TextEncoder().encode(`${id}.${timestamp}.${input.body}`);
  for (const entry of signatures.split(' ')) {
    const [version, encoded] = entry.split(',');
    if (version !== 'v1' || !encoded) continue;
    const signature = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
    if (await crypto.subtle.verify('HMAC', key, signature, content)) return { ok: true };
  }
  return { ok: false, why: 'no v1 signature matches' };
}
