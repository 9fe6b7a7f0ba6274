/** Polls `condition` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitUntil<T>(
  condition: () => T | undefined | false,
  description: string,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = condition();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
