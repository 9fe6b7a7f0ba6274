import { DAY_MS } from './duration.js';

/**
 * Connection health, exactly as the seed's table (section 3):
 * - success rate = (Completed + Confirmed) / Total over the deliveries of the last 24 hours;
 * - recent activity = at least one delivery within the last 7 days;
 * - Healthy: rate ≥ 98 % and recent activity, or no events yet;
 * - Warning: rate from 90 % to below 98 %, or no recent activity;
 * - Critical: rate < 90 %.
 * A non-durable delivery has no Confirmed/Completed states; it counts as a success once GitHub
 * accepted its dispatch (decision recorded in docs/configuration.md).
 */
export type Health = 'Healthy' | 'Warning' | 'Critical';

export const HEALTH_WINDOW_MS = DAY_MS;
export const RECENT_ACTIVITY_MS = 7 * DAY_MS;
/** Healthy at or above this success rate (percent), Warning from WARNING_PERCENT up to it, else Critical. */
export const HEALTHY_PERCENT = 98;
export const WARNING_PERCENT = 90;

/** Percentage with two decimals, rounded down (97.999 % is not 98 %); null without deliveries. */
export function successRate(total: number, succeeded: number): number | null {
  return total === 0 ? null : Math.floor((succeeded * 10_000) / total) / 100;
}

export interface HealthInput {
  /** Deliveries in the last 24 h, and how many of them succeeded. */
  total: number;
  succeeded: number;
  /** When the newest delivery of the connection was dispatched; null when it never had one. */
  lastEventAt: number | null;
  now: number;
}

export interface HealthReport {
  health: Health;
  /** Percentage with two decimals, null when there were no deliveries in the window. */
  successRate: number | null;
  recentActivity: boolean;
}

/** @example connectionHealth({ total: 100, succeeded: 98, lastEventAt: now, now }).health // 'Healthy' */
export function connectionHealth(input: HealthInput): HealthReport {
  const recentActivity = input.lastEventAt !== null && input.now - input.lastEventAt <= RECENT_ACTIVITY_MS;
  if (input.lastEventAt === null) return { health: 'Healthy', successRate: null, recentActivity };
  const rate = successRate(input.total, input.succeeded);
  // Compare in integers: 97.99 % must not round up to 98 %.
  if (input.total > 0 && input.succeeded * 100 < WARNING_PERCENT * input.total)
    return { health: 'Critical', successRate: rate, recentActivity };
  if (input.total > 0 && input.succeeded * 100 < HEALTHY_PERCENT * input.total)
    return { health: 'Warning', successRate: rate, recentActivity };
  if (!recentActivity) return { health: 'Warning', successRate: rate, recentActivity };
  return { health: 'Healthy', successRate: rate, recentActivity };
}
