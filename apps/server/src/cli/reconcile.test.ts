import { describe, expect, it } from 'vitest';
import { formatReconcileReport } from './reconcile.js';

describe('formatReconcileReport', () => {
  it('says which ask a redelivery is, and which were given up', () => {
    const request = {
      guid: '9e3c1a60-0000-4000-8000-000000000001',
      hook: 'repository:480912331',
      githubDeliveryId: 12,
      event: 'workflow_run',
      action: 'completed',
    };
    const text = formatReconcileReport({
      ran: true,
      webhooks: [
        {
          webhook: 'acme/api provider webhook 480912331',
          outcome: 'checked',
          listed: 3,
          failed: 2,
          requested: 1,
          gaveUp: 1,
        },
      ],
      requested: [{ ...request, ask: 2 }],
      gaveUp: [{ ...request, guid: '9e3c1a60-0000-4000-8000-000000000002' }],
      recovered: [],
    });
    expect(text.split('\n')).toEqual([
      'acme/api provider webhook 480912331: 3 deliveries listed, 2 failed, 1 redelivery requested',
      'requested: workflow_run.completed 9e3c1a60-0000-4000-8000-000000000001 (repository:480912331, ask 2 of 5)',
      'gave up: workflow_run.completed 9e3c1a60-0000-4000-8000-000000000002 (repository:480912331) failed again after 5 redeliveries; redeliver it on GitHub once the cause is fixed',
      '1 redeliveries requested, 0 recovered, 1 not arrived yet',
      '',
    ]);
  });
});
