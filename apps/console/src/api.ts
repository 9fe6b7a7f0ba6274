/**
 * Calls the management API with the session cookie. The browser adds `Origin` to every change
 * (POST, PUT, PATCH), which the server requires of cookie-authenticated changes.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const problem = (parsed ?? {}) as { code?: string; detail?: string };
    throw new ApiError(
      response.status,
      problem.code ?? 'error',
      problem.detail ?? `${method} ${path} answered ${response.status}`,
    );
  }
  return parsed as T;
}

/** The shapes the console reads (docs/openapi.json has them all). */
export interface Me {
  user: { login: string; id: number | null };
  accounts: Array<{ id: number; login: string; type: string; suspended: boolean }>;
}

export interface Delivery {
  deliveryId: string;
  correlationId: string;
  connectionId: string;
  deliveryStatus: 'Dispatched' | 'Confirmed' | 'Completed' | 'Failed';
  durable: boolean;
  dispatchedAt: string | null;
  confirmedAt: string | null;
  completedAt: string | null;
  consumerWorkflowConclusion: string | null;
  retryNumber: number;
  isReplay: boolean;
  provider: { account: string; repository: string; workflow: string; runId: string };
  consumer: { account: string; repository: string };
  eventType: string;
  failureReason?: string;
  replayedBy?: string;
  replayOf?: string;
  attempts?: Array<{
    number: number;
    at: string;
    durationMs: number;
    outcome: string;
    status: number | null;
    category: string | null;
    message: string | null;
  }>;
}

export interface Connection {
  id: string;
  status: string;
  durable: boolean;
  service: { id: string; slug: string };
  provider: { account: string | null; repository: string | null };
  consumer: { account: string | null; repository: string | null };
  health: string;
  successRate: number | null;
  lastEventAt: string | null;
  stats: {
    last24h: { total: number; succeeded: number; failed: number };
    last7d: { total: number };
    pending: number;
  };
}

export interface Diagnostics {
  connectionId: string;
  health: string;
  successRate: number | null;
  categories: Record<string, number>;
  recentFailures: Array<{
    deliveryId: string;
    at: string;
    category: string;
    status: number | null;
    message: string;
  }>;
  recommendations: Array<{ category: string; text: string }>;
}

export interface Usage {
  month: string;
  usage: Array<{ account: string; month: string; counters: Record<string, number> }>;
}
