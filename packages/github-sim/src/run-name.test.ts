import { describe, expect, it } from 'vitest';
import { evaluateRunName } from './run-name.js';

const contexts = {
  github: {
    repository: 'acme/consumer',
    run_id: '9000000042',
    event: {
      action: 'zekt-delivery',
      client_payload: {
        zekt: { deliveryId: 'delivery-1', retry: 2, durable: true, event: { a: 1 } },
        list: [1],
      },
    },
  },
  inputs: { zekt: '{"deliveryId":"delivery-2","event":{"runId":"7"}}', broken: '{not json' },
};

describe('run-name evaluation', () => {
  it.each([
    // biome-ignore-start lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions, not JS templates
    ['zekt ${{ github.event.client_payload.zekt.deliveryId }}', 'zekt delivery-1'],
    [
      '${{github.event.action}}/${{ github.repository }}#${{ github.run_id }}',
      'zekt-delivery/acme/consumer#9000000042',
    ],
    ["${{ github['event'].client_payload['zekt'].DeliveryID }}", 'delivery-1'],
    [
      'retry ${{ github.event.client_payload.zekt.retry }} ${{ github.event.client_payload.zekt.durable }}',
      'retry 2 true',
    ],
    [
      '[${{ github.event.client_payload.zekt.event }}][${{ github.event.client_payload.list }}]',
      '[Object][Array]',
    ],
    ['[${{ github.event.client_payload.missing.deeper }}][${{ secrets.TOKEN }}]', '[][]'],
    ["[${{ format('{0}', github.run_id) }}][${{ github.run_id || 'x' }}]", '[][]'],
    ['no expressions', 'no expressions'],
    // A workflow_dispatch run: the `inputs` context, and the zekt input read with fromJSON.
    ['zekt ${{ fromJSON(inputs.zekt).deliveryId }}', 'zekt delivery-2'],
    ["${{ FromJson( inputs['zekt'] ).event.runId }}", '7'],
    ['[${{ fromJSON(inputs.broken).deliveryId }}][${{ fromJSON(inputs.missing).x }}]', '[][]'],
    ['[${{ fromJSON(inputs.zekt) }}][${{ fromJSON(inputs.zekt) || 1 }}]', '[Object][]'],
    // biome-ignore-end lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions, not JS templates
  ])('%s → %s', (template, expected) => {
    expect(evaluateRunName(template, contexts)).toBe(expected);
  });
});
