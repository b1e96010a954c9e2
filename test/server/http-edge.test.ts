// The HTTP edge's check list (src/server/http/edge/edge.ts): the checks run
// in order, the first refusal answers and no later check runs, and the token
// check spares only the routes that hold no mail. Through a real server the
// token is proven in security.test.ts and the Host, Origin and Content-Type
// checks in cross-site.test.ts; this pins the list itself.
import { describe, expect, it } from 'vitest';
import { Refusal } from '../../src/contract/refusal.js';
import { edgeChecks, firstRefusal } from '../../src/server/http/edge/edge.js';
import type { EdgeCheck, EdgeRequest } from '../../src/server/http/edge/edge-check.js';
import { edgePolicyOf } from '../../src/server/http/edge/edge-policy.js';

const policy = edgePolicyOf({ host: '127.0.0.1', allowedHosts: [], allowOrigins: [] });

const request = (routeKind: string, authorization?: string): EdgeRequest => ({
  method: 'GET',
  path: '/api/v1/mailbox',
  headers: { host: '127.0.0.1:8025', ...(authorization === undefined ? {} : { authorization }) },
  routeKind,
});

describe('the HTTP edge', () => {
  it('runs the Host, Origin and Content-Type checks, and no token check on a server started without a token', () => {
    expect(edgeChecks({ token: undefined, policy })).toHaveLength(3);
    expect(edgeChecks({ token: 's3cret', policy })).toHaveLength(4);
    expect(firstRefusal(edgeChecks({ token: undefined, policy }), request('api'))).toBeUndefined();
  });

  it('refuses a foreign Host before it looks at the token', () => {
    const refusal = firstRefusal(edgeChecks({ token: 's3cret', policy }), { ...request('api', 'Bearer wrong'), headers: { host: 'evil.example' } });
    expect(refusal?.slug).toBe('forbidden_host');
  });

  it('refuses a request without the token with 401 unauthorized and WWW-Authenticate, on every route that holds mail', () => {
    const checks = edgeChecks({ token: 's3cret', policy });
    for (const kind of ['api', 'mcp', 'events', 'mailboxes', 'smtpLab', 'webhooks', 'metrics', 'faults', 'stats']) {
      const refusal = firstRefusal(checks, request(kind, 'Bearer wrong'));
      expect(refusal, kind).toBeInstanceOf(Refusal);
      expect({ status: refusal?.status, slug: refusal?.slug, headers: refusal?.headers }, kind).toEqual({
        status: 401,
        slug: 'unauthorized',
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    expect(firstRefusal(checks, request('api', 'Bearer s3cret'))).toBeUndefined();
  });

  it('lets /healthz and the UI files through without a token', () => {
    const checks = edgeChecks({ token: 's3cret', policy });
    expect(firstRefusal(checks, request('healthz'))).toBeUndefined();
    expect(firstRefusal(checks, request('ui'))).toBeUndefined();
  });

  it('answers with the first refusal in the list and runs no check after it', () => {
    const ran: string[] = [];
    const check =
      (name: string, refuses: boolean): EdgeCheck =>
      () => {
        ran.push(name);
        return refuses ? new Refusal(400, 'invalid_request', name) : undefined;
      };
    const refusal = firstRefusal([check('first', false), check('second', true), check('third', true)], request('api'));
    expect(refusal?.message).toBe('second');
    expect(ran).toEqual(['first', 'second']);
  });
});
