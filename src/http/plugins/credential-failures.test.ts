import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { createCredentialFailures } from './credential-failures.js';

const requestFrom = (ip: string): FastifyRequest =>
  ({ ip, socket: { remoteAddress: ip } }) as unknown as FastifyRequest;

function refusal(run: () => void): ApiError | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

describe('the limit on failed credentials', () => {
  it('locks a client out at its 3rd failure in the window, says when a guess is allowed again, and lets it in once the oldest failure left', () => {
    let nowMs = 1_000_000;
    const limit = createCredentialFailures({ max: 3, windowSeconds: 60, now: () => nowMs });
    const guesser = requestFrom('192.0.2.1');
    for (const atMs of [0, 10_000, 20_000]) {
      nowMs = 1_000_000 + atMs;
      expect(refusal(() => limit.refuseLockedOut(guesser))).toBeUndefined();
      limit.recordFailure(guesser);
    }
    nowMs = 1_000_000 + 30_000;
    const refused = refusal(() => limit.refuseLockedOut(guesser));
    expect(refused?.status).toBe(429);
    // The first failure leaves the window at 60 s: 30 s from now.
    expect(refused?.headers?.['Retry-After']).toBe('30');
    expect(refusal(() => limit.refuseLockedOut(requestFrom('192.0.2.2')))).toBeUndefined();
    nowMs = 1_000_000 + 60_000;
    expect(refusal(() => limit.refuseLockedOut(guesser))).toBeUndefined();
  });

  it('counts an IPv6 /64 as one client, as the request limit does', () => {
    const limit = createCredentialFailures({ max: 2, now: () => 0 });
    limit.recordFailure(requestFrom('2001:db8:1:2::1'));
    limit.recordFailure(requestFrom('2001:db8:1:2::ffff'));
    expect(refusal(() => limit.refuseLockedOut(requestFrom('2001:db8:1:2:abcd::9')))?.status).toBe(429);
    expect(refusal(() => limit.refuseLockedOut(requestFrom('2001:db8:1:3::1')))).toBeUndefined();
  });

  it('remembers a bounded number of clients, forgetting the longest-known first', () => {
    const limit = createCredentialFailures({ max: 1, maxClients: 2, now: () => 0 });
    for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) limit.recordFailure(requestFrom(ip));
    expect(refusal(() => limit.refuseLockedOut(requestFrom('192.0.2.1')))).toBeUndefined();
    expect(refusal(() => limit.refuseLockedOut(requestFrom('192.0.2.3')))?.status).toBe(429);
  });
});
