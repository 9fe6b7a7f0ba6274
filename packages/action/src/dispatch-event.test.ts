import { describe, expect, it } from 'vitest';
import { readDelivery } from './dispatch-event.js';

const deliveryId = 'delivery-0b6f4a4e-3c1d-4a55-9a43-5f0c8e2d1a77';
const dispatch = (zekt: unknown) => ({ action: 'acme-deployed', client_payload: { zekt } });

describe('readDelivery', () => {
  it('reads the ids, the token and an inline message', () => {
    expect(
      readDelivery(dispatch({ correlationId: '42', deliveryId, token: 'zdt_x', payload: { v: 1 } })),
    ).toEqual({
      ok: true,
      delivery: {
        correlationId: '42',
        deliveryId,
        token: 'zdt_x',
        message: { kind: 'inline', payload: { v: 1 } },
      },
    });
  });

  it('keeps a null message inline: the provider sent null', () => {
    expect(readDelivery(dispatch({ correlationId: 42, payload: null }))).toMatchObject({
      ok: true,
      delivery: { correlationId: 42, message: { kind: 'inline', payload: null } },
    });
  });

  it('reads a message sent by reference, and a delivery without message', () => {
    const url = `https://zekt.example.com/api/deliveries/${deliveryId}/payload`;
    expect(
      readDelivery(dispatch({ correlationId: '42', payloadRef: { url, bytes: 400_000 } })),
    ).toMatchObject({
      ok: true,
      delivery: { message: { kind: 'reference', url, bytes: 400_000 } },
    });
    expect(readDelivery(dispatch({ correlationId: '42' }))).toMatchObject({
      ok: true,
      delivery: { message: { kind: 'none' } },
    });
  });

  it('refuses events that are not Zekt deliveries', () => {
    for (const event of [null, [], {}, { client_payload: {} }, { client_payload: { zekt: 'x' } }]) {
      expect(readDelivery(event)).toEqual({
        ok: false,
        problem: expect.stringContaining('github.event.client_payload.zekt is missing'),
      });
    }
  });

  it('reads the zekt input of a workflow_dispatch, the same object as a JSON text', () => {
    const zekt = { correlationId: '42', deliveryId, token: 'zdt_x', payload: { v: 1 } };
    const event = {
      inputs: { zekt: JSON.stringify(zekt) },
      ref: 'refs/heads/main',
      workflow: '.github/workflows/on-zekt.yml',
    };
    expect(readDelivery(event)).toEqual(readDelivery(dispatch(zekt)));
    expect(readDelivery({ inputs: { zekt: JSON.stringify({ deliveryId }) } })).toEqual({
      ok: false,
      problem: expect.stringContaining('github.event.inputs.zekt.correlationId is missing'),
    });
    for (const input of ['not json', '[1]', '"x"', 42]) {
      expect(readDelivery({ inputs: { zekt: input } })).toEqual({
        ok: false,
        problem: expect.stringContaining('github.event.inputs.zekt is not the JSON text of an object'),
      });
    }
    expect(readDelivery({ inputs: { other: 'x' } })).toEqual({
      ok: false,
      problem: expect.stringContaining('(and so is github.event.inputs.zekt)'),
    });
  });

  it('refuses malformed fields', () => {
    const cases: Array<[unknown, string]> = [
      [{ deliveryId }, 'correlationId is missing'],
      [{ correlationId: '' }, 'correlationId is missing'],
      [{ correlationId: 1.5 }, 'correlationId is missing'],
      [{ correlationId: '42', deliveryId: 7 }, 'deliveryId is not a string'],
      [{ correlationId: '42', token: {} }, 'token is not a string'],
      [{ correlationId: '42', payloadRef: { bytes: 1 } }, 'payloadRef has no url'],
    ];
    for (const [zekt, problem] of cases) {
      expect(readDelivery(dispatch(zekt))).toEqual({ ok: false, problem: expect.stringContaining(problem) });
    }
  });
});
