import type { ProbeAnswer } from './domain/service-checks.js';

/**
 * One plain HTTP request whose outcome is data, for the checks: an answer (status and body, parsed
 * as JSON when it is), or why none came, in words an operator can act on.
 */
export async function probeUrl(
  url: string,
  options: { method?: 'GET' | 'HEAD'; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<ProbeAnswer> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  try {
    const response = await fetch(url, {
      method: options.method ?? 'GET',
      headers: { 'user-agent': 'zekt', ...options.headers },
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = options.method === 'HEAD' ? '' : await response.text().catch(() => '');
    return { kind: 'answered', status: response.status, body: parseJson(text) };
  } catch (error) {
    return { kind: 'unreachable', reason: describeFetchFailure(error, timeoutMs) };
  }
}

export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `fetch failed` says nothing; its cause (ECONNREFUSED, ENOTFOUND, a timeout) does. */
export function describeFetchFailure(error: unknown, timeoutMs: number): string {
  if ((error as { name?: string })?.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const message = cause?.message ?? '';
  if (cause?.code) return message.includes(cause.code) ? message : `${message} (${cause.code})`.trim();
  return message || ((error as Error)?.message ?? String(error));
}
