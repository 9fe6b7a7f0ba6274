import { describe, expect, it } from 'vitest';
import {
  decideSubscription,
  isActive,
  isFinal,
  SUBSCRIPTION_STATUSES,
  type SubscriptionDecision,
  type SubscriptionStatus,
} from './subscription-state.js';

const provider = { asProvider: true, asConsumer: false };
const consumer = { asProvider: false, asConsumer: true };
const both = { asProvider: true, asConsumer: true };
const neither = { asProvider: false, asConsumer: false };

describe('subscription transitions', () => {
  it('lets the provider approve or deny a request', () => {
    expect(decideSubscription('requested', 'approve', provider)).toEqual({
      outcome: 'changed',
      to: 'approved',
      action: 'subscription.approve',
    });
    expect(decideSubscription('requested', 'deny', provider)).toEqual({
      outcome: 'changed',
      to: 'denied',
      action: 'subscription.deny',
    });
  });

  it('makes a provider’s revoke a revocation and a consumer’s a withdrawal, of a request or an approval', () => {
    for (const from of ['requested', 'approved'] as const) {
      expect(decideSubscription(from, 'revoke', provider)).toEqual({
        outcome: 'changed',
        to: 'revoked',
        action: 'subscription.revoke',
      });
      expect(decideSubscription(from, 'revoke', consumer)).toEqual({
        outcome: 'changed',
        to: 'withdrawn',
        action: 'subscription.withdraw',
      });
    }
  });

  it('treats a caller on both sides as the provider', () => {
    expect(decideSubscription('approved', 'revoke', both)).toMatchObject({ to: 'revoked' });
    expect(decideSubscription('requested', 'approve', both)).toMatchObject({ to: 'approved' });
  });

  it('never lets the consumer approve or deny, nor a stranger do anything', () => {
    expect(decideSubscription('requested', 'approve', consumer)).toEqual({ outcome: 'not_allowed' });
    expect(decideSubscription('requested', 'deny', consumer)).toEqual({ outcome: 'not_allowed' });
    for (const decision of ['approve', 'deny', 'revoke'] as const) {
      expect(decideSubscription('requested', decision, neither)).toEqual({ outcome: 'not_allowed' });
    }
  });

  it('answers invalid_transition, naming both states, for every decision on a final state', () => {
    const finals: SubscriptionStatus[] = ['denied', 'revoked', 'withdrawn'];
    const cases: Array<[SubscriptionDecision, typeof provider, SubscriptionStatus]> = [
      ['approve', provider, 'approved'],
      ['deny', provider, 'denied'],
      ['revoke', provider, 'revoked'],
      ['revoke', consumer, 'withdrawn'],
    ];
    for (const from of finals) {
      for (const [decision, parties, to] of cases) {
        expect(decideSubscription(from, decision, parties)).toEqual({
          outcome: 'invalid_transition',
          from,
          to,
        });
      }
    }
  });

  it('does not approve or deny twice', () => {
    expect(decideSubscription('approved', 'approve', provider)).toEqual({
      outcome: 'invalid_transition',
      from: 'approved',
      to: 'approved',
    });
    expect(decideSubscription('approved', 'deny', provider)).toEqual({
      outcome: 'invalid_transition',
      from: 'approved',
      to: 'denied',
    });
  });

  it('calls only an approved subscription active, and every state but requested and approved final', () => {
    expect(SUBSCRIPTION_STATUSES.filter(isActive)).toEqual(['approved']);
    expect(SUBSCRIPTION_STATUSES.filter(isFinal)).toEqual(['denied', 'revoked', 'withdrawn']);
  });
});
