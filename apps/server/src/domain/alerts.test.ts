import { describe, expect, it } from 'vitest';
import {
  ALERT_RETRY_SCHEDULE_MS,
  alertDedupKey,
  alertSendFailure,
  healthAlertKind,
  nextAlertAttemptAt,
} from './alerts.js';

describe('alert rules', () => {
  it('raises on turning Warning or Critical and on recovering, never when health stays', () => {
    expect(healthAlertKind(null, 'Healthy')).toBeNull();
    expect(healthAlertKind('Healthy', 'Healthy')).toBeNull();
    expect(healthAlertKind('Critical', 'Critical')).toBeNull();
    expect(healthAlertKind(null, 'Warning')).toBe('connection.warning');
    expect(healthAlertKind('Healthy', 'Critical')).toBe('connection.critical');
    expect(healthAlertKind('Warning', 'Critical')).toBe('connection.critical');
    expect(healthAlertKind('Critical', 'Warning')).toBe('connection.warning');
    expect(healthAlertKind('Critical', 'Healthy')).toBe('connection.recovered');
    expect(healthAlertKind('Warning', 'Healthy')).toBe('connection.recovered');
  });

  it('folds alerts by kind and subject', () => {
    expect(alertDedupKey('delivery.exhausted', 'delivery-1')).toBe('delivery.exhausted:delivery-1');
    expect(alertDedupKey('connection.warning', 'sub_1')).not.toBe(
      alertDedupKey('connection.critical', 'sub_1'),
    );
  });

  it('retries a failed send on its own schedule, then gives up', () => {
    expect(nextAlertAttemptAt(1, 1_000)).toBe(1_000 + 10_000);
    expect(nextAlertAttemptAt(2, 0)).toBe(60_000);
    expect(nextAlertAttemptAt(ALERT_RETRY_SCHEDULE_MS.length - 1, 0)).toBe(2 * 3_600_000);
    expect(nextAlertAttemptAt(ALERT_RETRY_SCHEDULE_MS.length, 0)).toBeNull();
  });
});

describe('alertSendFailure', () => {
  it('delivers on a 2xx only; a redirect is its own failure, not followed', () => {
    expect([200, 204, 299].map(alertSendFailure)).toEqual([null, null, null]);
    expect([301, 302, 307, 308].map(alertSendFailure)).toEqual([
      'redirect',
      'redirect',
      'redirect',
      'redirect',
    ]);
    expect([100, 400, 401, 500, 503].map(alertSendFailure)).toEqual([
      'error_status',
      'error_status',
      'error_status',
      'error_status',
      'error_status',
    ]);
  });
});
