import { request as httpRequestRaw } from 'node:http';
import { request as httpsRequestRaw } from 'node:https';

export interface HttpRequestOptions {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One HTTP request with exactly the given headers (no keep-alive, no added browser headers), as
 * GitHub's webhook sender and the Actions toolkit make them. Rejects on network errors and when
 * no complete response arrives within `timeoutMs`.
 */
export function httpRequest(options: HttpRequestOptions): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(options.url);
    } catch {
      reject(new Error(`invalid URL: ${options.url}`));
      return;
    }
    const send = target.protocol === 'https:' ? httpsRequestRaw : httpRequestRaw;
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(options.body));
    const req = send(target, { method: options.method, headers, agent: false, signal: options.signal });
    const timer = setTimeout(() => {
      req.destroy(new Error(`timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        const responseHeaders: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: responseHeaders,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
      res.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(options.body);
  });
}
