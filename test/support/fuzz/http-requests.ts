// Arbitrary HTTP requests for the mailbox API, and what every answer to one
// must be. Shared by test/server/fuzz-http.test.ts (fixed seed, modest runs)
// and scripts/fuzz.ts (FUZZ_RUNS, any seed).
//
// The generators reach every route with well-formed, malformed and hostile
// parts alike: methods, paths (percent-encoded, dotted, huge), query strings
// (repeated, missing, garbage, every parameter the API reads), headers (huge,
// 8-bit, control bytes), bodies (JSON-RPC for /mcp, fault injections, bytes,
// over the caps) and framing (chunked, length, both). Two things are held
// back so that a run is a verdict and not a wait: every long-poll and MCP wait
// asks for at most a fraction of a second, and every fault injected through
// the admin route targets addresses no generated request names.
import fc from 'fast-check';
import type { RawHttpOutcome } from './raw-http.js';

export interface FuzzTargets {
  /** A served domain. */
  readonly domain: string;
  /** An address whose mailbox holds mail, and the ids of that mail (requests may delete them). */
  readonly seededAddress: string;
  readonly seededIds: readonly string[];
}

export interface FuzzRequest {
  readonly method: string;
  readonly target: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer | undefined;
  readonly framing: 'length' | 'chunked' | 'both' | 'short';
}

const WAIT_PATH = '/api/v1/mailbox/wait';

/** The provider APIs' send paths (docs/providers.md), each with the auth header its provider's SDK sends. */
const PROVIDER_CALLS: ReadonlyArray<readonly [path: string, auth: readonly [string, string], body: 'json' | 'form' | 'multipart']> = [
  ['/emails', ['Authorization', 'Bearer re_fuzz'], 'json'],
  ['/emails/batch', ['Authorization', 'Bearer re_fuzz'], 'json'],
  [
    '/v2/email/outbound-emails',
    ['Authorization', 'AWS4-HMAC-SHA256 Credential=AKID/20300101/us-east-1/ses/aws4_request, SignedHeaders=host, Signature=00ff'],
    'json',
  ],
  ['/', ['Authorization', 'AWS4-HMAC-SHA256 Credential=AKID/20300101/us-east-1/ses/aws4_request, SignedHeaders=host, Signature=00ff'], 'form'],
  ['/v3/mail/send', ['Authorization', 'Bearer SG.fuzz'], 'json'],
  ['/email', ['X-Postmark-Server-Token', 'fuzz'], 'json'],
  ['/email/batch', ['X-Postmark-Server-Token', 'fuzz'], 'json'],
  ['/v3/acme.test/messages', ['Authorization', `Basic ${Buffer.from('api:key-fuzz').toString('base64')}`], 'form'],
  ['/v3/acme.test/messages.mime', ['Authorization', `Basic ${Buffer.from('api:key-fuzz').toString('base64')}`], 'multipart'],
  ['/v3/smtp/email', ['api-key', 'xkeysib-fuzz'], 'json'],
];
const PROVIDER_PATHS = new Set(PROVIDER_CALLS.map(([path]) => path));

/** A provider's send call: answered in that provider's own shape (its JSON, SES v1's XML, Mailgun's text 401), not the API's slugs. */
const isProviderCall = (request: FuzzRequest) => request.method === 'POST' && PROVIDER_PATHS.has(request.target.split('?')[0]!);

/** Percent-encodes like a client would, or not at all, or badly. */
const encoded = (value: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(value, fc.constantFrom('uri', 'uri', 'raw', 'plus', 'broken')).map(([v, how]) => {
    if (how === 'uri') return encodeURIComponent(v);
    if (how === 'plus') return encodeURIComponent(v).replace(/%20/g, '+');
    if (how === 'broken') return `${encodeURIComponent(v)}%${['', 'E', 'ZZ', 'E0%A4%A', 'C0%80', '00'][v.length % 6]}`;
    // raw: what the parser accepts in a request target passes, the rest is its to refuse
    return v.replace(/[ #\r\n]/g, (c) => encodeURIComponent(c));
  });

function addressArb(t: FuzzTargets): fc.Arbitrary<string> {
  const local = fc.stringMatching(/^[a-z0-9][a-z0-9.+_-]{0,20}$/);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(t.seededAddress) },
    { weight: 4, arbitrary: local.map((l) => `fz-${l}@${t.domain}`) },
    { weight: 1, arbitrary: local.map((l) => `FZ-${l.toUpperCase()}@${t.domain.toUpperCase()}`) },
    { weight: 1, arbitrary: fc.constantFrom(`ñandú@${t.domain}`, `用户@${t.domain}`, `a@${t.domain}.`, `"quoted"@${t.domain}`, `postmaster@${t.domain}`) },
    { weight: 2, arbitrary: local.map((l) => `${l}@elsewhere.example`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('', ' ', 'a', '@', 'a@', `@${t.domain}`, `a..b@${t.domain}`, `a@b@${t.domain}`, `a b@${t.domain}`, `a\u0000@${t.domain}`),
    },
    { weight: 1, arbitrary: fc.integer({ min: 60, max: 5000 }).map((n) => `${'x'.repeat(n)}@${t.domain}`) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  );
}

function idArb(t: FuzzTargets): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: t.seededIds.length > 0 ? fc.constantFrom(...t.seededIds) : fc.constant('00000000000') },
    { weight: 3, arbitrary: fc.stringMatching(/^[0-9a-z]{11}$/) },
    { weight: 1, arbitrary: fc.constantFrom('', '.', '..', '%2e%2e', 'ZZZZZZZZZZZ', '00000000000%00', '0000000000', '000000000000', '%E0%A4%A') },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map(encodeURIComponent) },
  );
}

/** Values that a long-poll answers within a fraction of a second: small, or refused. */
const quickTimeout = fc.constantFrom('0', '0', '0.01', '0.05', '-1', 'abc', '', '1e3', '99999999999', '0.0001', 'NaN', '25.', '0x1');

function queryArb(t: FuzzTargets): fc.Arbitrary<Array<[string, string]>> {
  const pair = fc.oneof(
    { weight: 5, arbitrary: fc.tuple(fc.constantFrom('address', 'mailbox'), encoded(addressArb(t))) },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constant('limit'), fc.oneof(fc.integer({ min: -5, max: 120 }).map(String), fc.constantFrom('', '1e2', '0x10', ' 5', 'NaN'))),
    },
    { weight: 2, arbitrary: fc.tuple(fc.constant('since_id'), encoded(idArb(t))) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('subject_contains', 'from_contains'), encoded(fc.string({ unit: 'grapheme', maxLength: 30 }))) },
    { weight: 1, arbitrary: fc.tuple(fc.stringMatching(/^[a-z_]{1,12}$/), encoded(fc.string({ maxLength: 20 }))) },
  );
  return fc.array(pair, { maxLength: 6 });
}

function pathArb(t: FuzzTargets): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant('/api/v1/mailbox') },
    { weight: 2, arbitrary: fc.constant(WAIT_PATH) },
    { weight: 3, arbitrary: idArb(t).map((id) => `/api/v1/message/${id}`) },
    { weight: 2, arbitrary: idArb(t).map((id) => `/api/v1/message/${id}/raw`) },
    { weight: 2, arbitrary: fc.constant('/mcp') },
    { weight: 1, arbitrary: fc.constantFrom('/healthz', '/_mailroom/faults', '/_mailroom/stats', '/', '/api/v1', '/api/v1/', '//api/v1/mailbox') },
    { weight: 2, arbitrary: fc.constantFrom(...PROVIDER_CALLS.map(([path]) => path)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('/api/v1/mailbox/../mailbox', '/api/v1/%6dailbox', '/API/V1/MAILBOX', '/healthz/', '/mcp/', '*', '/api/v1/message/'),
    },
    { weight: 1, arbitrary: fc.webPath() },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => `/api/v1/${'a'.repeat(n)}`) },
  );
}

const methodArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET', 'GET', 'DELETE', 'POST', 'HEAD') },
  { weight: 2, arbitrary: fc.constantFrom('PUT', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'get', 'G E T', 'CONNECT', 'M-SEARCH', '') },
);

function jsonRpcArb(t: FuzzTargets): fc.Arbitrary<unknown> {
  const args = fc.record(
    {
      address: fc.oneof(addressArb(t), fc.jsonValue()),
      id: fc.oneof(idArb(t), fc.jsonValue()),
      since_id: fc.oneof(idArb(t), fc.jsonValue()),
      from_contains: fc.oneof(fc.string(), fc.jsonValue()),
      subject_contains: fc.string(),
      limit: fc.oneof(fc.integer({ min: -5, max: 200 }), fc.jsonValue()),
      extra: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );
  const call = fc
    .record({
      name: fc.constantFrom('wait_for_message', 'list_messages', 'get_message', 'delete_message', 'nope', ''),
      arguments: args,
      quick: fc.constantFrom(0, 0, 0.01, 0.05, -1, 'soon', null),
    })
    // a wait asks for a fraction of a second (or for something refused)
    .map(({ name, arguments: a, quick }) => ({ name, arguments: name === 'wait_for_message' ? { ...a, timeout_seconds: quick } : a }));
  const message = fc.record(
    {
      jsonrpc: fc.constantFrom('2.0', '2.0', '1.0', 2),
      id: fc.oneof(fc.nat(), fc.string({ maxLength: 8 }), fc.constant(null)),
      method: fc.constantFrom('tools/call', 'tools/call', 'tools/list', 'initialize', 'ping', 'notifications/initialized', 'resources/list', 'nope'),
      params: fc.oneof(call, fc.jsonValue()),
    },
    { requiredKeys: ['jsonrpc', 'method'] },
  );
  return fc.oneof({ weight: 4, arbitrary: message }, { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }) });
}

function bodyArb(t: FuzzTargets): fc.Arbitrary<Buffer | undefined> {
  const text = (value: fc.Arbitrary<unknown>) => value.map((v) => Buffer.from(JSON.stringify(v) ?? 'null'));
  const injection = fc.record({
    address: fc.stringMatching(/^[a-z]{1,8}$/).map((l) => `${l}@nowhere.invalid`),
    route: fc.constantFrom('list', 'message', 'wait', 'any', 'nope'),
    times: fc.oneof(fc.integer({ min: -1, max: 3 }), fc.jsonValue()),
    fault: fc.oneof(
      fc.record({ kind: fc.constant('status'), status: fc.constantFrom(500, 502, 418) }),
      fc.record({ kind: fc.constant('slow'), delayMs: fc.oneof(fc.nat(), fc.jsonValue()) }),
      fc.record({ kind: fc.constantFrom('reset', 'rate_limit', 'nope'), retryAfter: fc.jsonValue() }),
    ),
  });
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 6, arbitrary: text(jsonRpcArb(t)) },
    { weight: 1, arbitrary: text(injection) },
    { weight: 2, arbitrary: text(fc.jsonValue()) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: text(jsonRpcArb(t)).map((b) => Buffer.from(b.toString('utf8'), 'utf16le')) },
    { weight: 1, arbitrary: fc.constantFrom(1024 * 1024 + 1, 3 * 1024 * 1024).map((n) => Buffer.alloc(n, 0x7b)) },
  );
}

function headersArb(): fc.Arbitrary<Array<[string, string]>> {
  const header = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.tuple(
        fc.constant('Content-Type'),
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data', ';;;'),
      ),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(
        fc.constant('Accept'),
        fc.constantFrom('*/*', 'application/json', 'text/event-stream', 'application/json, text/event-stream', 'text/html', 'nonsense/x;q=abc'),
      ),
    },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Authorization'), fc.constantFrom('Bearer x', 'Basic Zm9vOmJhcg==', 'Bearer', '')) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom('Origin', 'Access-Control-Request-Method', 'Referer'), fc.constantFrom('https://evil.example', 'null', 'DELETE')),
    },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Content-Encoding', 'Accept-Encoding'), fc.constantFrom('gzip', 'br', 'identity', 'x-nope')) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID'), fc.string({ maxLength: 40 })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Upgrade', 'Expect'), fc.constantFrom('h2c', 'websocket', '100-continue', 'nonsense')) },
    { weight: 2, arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/), fc.string({ unit: 'binary-ascii', maxLength: 60 })) },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constant('X-Latin'),
        fc.string({ unit: 'binary', maxLength: 30 }).map((s) => Buffer.from(s, 'utf8').toString('latin1')),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constant('X-Huge'),
        fc.integer({ min: 1000, max: 90_000 }).map((n) => 'h'.repeat(n)),
      ),
    },
  );
  return fc.array(header, { maxLength: 5 });
}

function hostileRequestArb(t: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: methodArb,
      path: pathArb(t),
      query: queryArb(t),
      timeout: quickTimeout,
      headers: headersArb(),
      body: bodyArb(t),
      framing: fc.constantFrom('length', 'length', 'length', 'chunked', 'chunked', 'both', 'short'),
    })
    .map(({ method, path, query, timeout, headers, body, framing }) => {
      const pairs = path === WAIT_PATH ? [...query.filter(([k]) => k !== 'timeout'), ['timeout', timeout] as [string, string]] : query;
      const search = pairs.map(([k, v]) => `${k}=${v}`).join('&');
      return { method, target: search ? `${path}?${search}` : path, headers, body, framing: framing };
    });
}

/** Requests a client could mean: a route's own method and parameters, so the handlers behind the parser are reached often. */
function cleanRequestArb(t: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const address = fc
    .oneof(
      { weight: 3, arbitrary: fc.constant(t.seededAddress) },
      { weight: 2, arbitrary: fc.stringMatching(/^[a-z0-9]{1,12}$/).map((l) => `fz-${l}@${t.domain}`) },
      { weight: 1, arbitrary: addressArb(t) },
    )
    .map(encodeURIComponent);
  const limit = fc.option(
    fc.integer({ min: 1, max: 100 }).map((n) => `&limit=${n}`),
    { nil: '' },
  );
  const sinceId = fc.option(
    idArb(t).map((id) => `&since_id=${id}`),
    { nil: '' },
  );
  const filter = fc.option(
    fc
      .tuple(fc.constantFrom('subject_contains', 'from_contains'), fc.string({ unit: 'grapheme', maxLength: 12 }))
      .map(([k, v]) => `&${k}=${encodeURIComponent(v)}`),
    { nil: '' },
  );
  const get = (target: fc.Arbitrary<string>, methods: string[] = ['GET']) =>
    fc.tuple(fc.constantFrom(...methods), target).map(([method, tgt]) => ({ method, target: tgt, body: undefined as Buffer | undefined }));
  const routes = fc.oneof(
    get(
      fc.tuple(address, limit).map(([a, l]) => `/api/v1/mailbox?address=${a}${l}`),
      ['GET', 'GET', 'DELETE', 'HEAD'],
    ),
    get(fc.tuple(address, sinceId, filter, quickTimeout, limit).map(([a, s, f, q, l]) => `${WAIT_PATH}?address=${a}${s}${f}&timeout=${q}${l}`)),
    get(
      fc.tuple(idArb(t), address).map(([id, a]) => `/api/v1/message/${id}?mailbox=${a}`),
      ['GET', 'GET', 'DELETE', 'HEAD'],
    ),
    get(fc.tuple(idArb(t), address).map(([id, a]) => `/api/v1/message/${id}/raw?mailbox=${a}`)),
    get(fc.constantFrom('/healthz', `/_mailroom/stats?address=${t.seededAddress}`)),
    fc.tuple(jsonRpcArb(t)).map(([rpc]) => ({ method: 'POST', target: '/mcp', body: Buffer.from(JSON.stringify(rpc)) })),
    providerCallArb(t),
  );
  const headers = fc.array(
    fc.oneof(
      fc.tuple(fc.constant('Content-Type'), fc.constantFrom('application/json', 'application/json; charset=utf-8')),
      fc.tuple(fc.constant('Accept'), fc.constantFrom('*/*', 'application/json', 'text/event-stream', 'application/json, text/event-stream')),
      fc.tuple(fc.constant('Origin'), fc.constant('https://evil.example')),
    ),
    { maxLength: 3 },
  );
  return fc.record({ route: routes, headers, framing: fc.constantFrom('length', 'chunked') }).map(({ route, headers: h, framing }) => {
    // A provider call carries its provider's auth header and body type.
    if ('auth' in route) {
      const { auth, type, ...request } = route;
      return {
        ...request,
        headers: [auth, ['Content-Type', type] as [string, string], ...h.filter(([n]) => n !== 'Content-Type')],
        framing: framing,
      };
    }
    return {
      ...route,
      headers: route.method === 'POST' && !h.some(([n]) => n === 'Content-Type') ? [...h, ['Content-Type', 'application/json'] as [string, string]] : h,
      framing: framing,
    };
  });
}

/**
 * A provider's send call as its SDK would make it, with the fields a mail
 * has, each well-formed, malformed or missing: the dialects' field readers,
 * the intake and the answers behind them. Its auth header is its own, so
 * the route is reached; the clean requests' other headers stay JSON's.
 */
function providerCallArb(
  t: FuzzTargets,
): fc.Arbitrary<{ method: string; target: string; body: Buffer | undefined; auth: readonly [string, string]; type: string }> {
  const to = fc.oneof(addressArb(t), fc.constant(`fz-provider@${t.domain}`), fc.jsonValue());
  const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.jsonValue());
  const base64 = fc.oneof(
    fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')),
    fc.constantFrom('!!!', 'YQ', '====', ''),
    fc.jsonValue(),
  );
  const fields = fc.record(
    {
      from: fc.oneof(fc.constant('Acme <app@acme.test>'), text),
      to: fc.oneof(to, fc.array(to, { maxLength: 3 })),
      subject: text,
      text,
      html: text,
      headers: fc.oneof(fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }), fc.jsonValue()),
      attachments: fc.array(fc.record({ filename: text, content: base64 }, { requiredKeys: [] }), { maxLength: 2 }),
    },
    { requiredKeys: [] },
  );
  const json = fc.oneof(
    { weight: 3, arbitrary: fields.map((f) => JSON.stringify(f)) },
    { weight: 1, arbitrary: fc.array(fields, { maxLength: 3 }).map((f) => JSON.stringify(f)) },
    { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  );
  const form = fc
    .array(
      fc.tuple(
        fc.constantFrom('Action', 'Source', 'to', 'from', 'subject', 'text', 'RawMessage.Data', 'Destinations.member.1', 'o:tag', 'h:X-A'),
        fc.string({ maxLength: 40 }),
      ),
      {
        maxLength: 6,
      },
    )
    .map((pairs) => new URLSearchParams(pairs).toString());
  return fc.tuple(fc.constantFrom(...PROVIDER_CALLS), json, form).map(([[path, auth, kind], jsonBody, formBody]) => ({
    method: 'POST',
    target: path,
    body: Buffer.from(kind === 'json' ? jsonBody : formBody),
    auth,
    type: kind === 'json' ? 'application/json' : kind === 'form' ? 'application/x-www-form-urlencoded' : 'multipart/form-data; boundary=fuzz',
  }));
}

/** Half requests a client could mean, half hostile ones (garbage for the parser, the router and the handlers alike). */
export function httpRequestArb(t: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(cleanRequestArb(t), hostileRequestArb(t));
}

/** The request's bytes, Host and Connection: close included. */
export function requestBytes(request: FuzzRequest): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  const body = request.body;
  if (!body) return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  let payload: Buffer = body;
  if (request.framing === 'length' || request.framing === 'both') lines.push(`Content-Length: ${body.length}`);
  if (request.framing === 'short') lines.push(`Content-Length: ${Math.floor(body.length / 2)}`);
  if (request.framing === 'chunked' || request.framing === 'both') {
    lines.push('Transfer-Encoding: chunked');
    const pieces: Buffer[] = [];
    for (let at = 0; at < body.length; at += 700) {
      const piece = body.subarray(at, at + 700);
      pieces.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    }
    payload = Buffer.concat([...pieces, Buffer.from('0\r\n\r\n')]);
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

const ANSWER_TYPES = /^(application\/json|message\/rfc822|text\/event-stream)(;|$)/;
/** A provider call's answers: its JSON, SES v1's XML, Mailgun's text 401. */
const PROVIDER_TYPES = /^(application\/json|text\/xml|text\/plain)(;|$)/;

/**
 * The web UI's own files (src/server/http/web-ui/ui-assets.ts): a page, a script
 * and a stylesheet, with the UI's policy (scripts from its origin only)
 * instead of the API's sandbox. Everything else stays as strict as before.
 */
const UI_FILES = new Set(['/', '/ui/app.js', '/ui/app.css']);
const UI_TYPES = /^(text\/html|text\/javascript|text\/css)(;|$)/;

/** Everything wrong with an answer; empty when it is what the contract promises. */
export function answerProblems(request: FuzzRequest, outcome: RawHttpOutcome): string[] {
  if (outcome.kind === 'hang') return [`no whole answer within the deadline; received ${JSON.stringify(outcome.received.toString('latin1').slice(0, 300))}`];
  if (outcome.kind === 'closed')
    return [`connection closed without a whole answer; received ${JSON.stringify(outcome.received.toString('latin1').slice(0, 300))}`];
  const problems: string[] = [];
  const { status, headers, body } = outcome;
  const header = (name: string) => headers[name]?.[0];
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = body.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  const j = json as { error?: unknown; message?: unknown; jsonrpc?: unknown } | undefined;
  if (status >= 500 && !(typeof j?.message === 'string' && j.message.startsWith('Injected fault'))) {
    const known = status === 503 && (j?.error === 'too_many_waits' || j?.error === 'unavailable');
    if (!known) problems.push(`${status} not injected by the fault switch: ${text.slice(0, 300)}`);
  }
  if (header('x-content-type-options') !== 'nosniff') problems.push('no X-Content-Type-Options: nosniff');
  const uiFile = status === 200 && UI_FILES.has(request.target.split('?')[0]!);
  const policy = header('content-security-policy');
  if (uiFile ? !policy?.includes("script-src 'self'") || !policy.includes("frame-ancestors 'none'") : !policy?.includes('sandbox')) {
    problems.push(uiFile ? `the UI's file without the UI's policy: ${policy}` : 'no sandboxing Content-Security-Policy');
  }
  const cors = Object.keys(headers).filter((name) => name.startsWith('access-control-'));
  if (cors.length > 0) problems.push(`CORS headers: ${cors.join(', ')}`);
  const type = header('content-type');
  const provider = isProviderCall(request) && !uiFile;
  if (type !== undefined && !(uiFile ? UI_TYPES : provider ? PROVIDER_TYPES : ANSWER_TYPES).test(type)) problems.push(`content type ${type}`);
  if (type === undefined && body.length > 0) problems.push('a body without a content type');
  const isHead = request.method === 'HEAD';
  if (provider && status >= 400) {
    // The provider's own shape: a body that says what was wrong (the edge's own refusals, 403/415, keep the API's slug).
    if (body.length === 0 || (type?.startsWith('application/json') && json === undefined))
      problems.push(`provider refusal ${status} with no readable body: ${text.slice(0, 300)}`);
  } else if (status >= 400 && !isHead) {
    const rpcError = j?.jsonrpc === '2.0' && typeof (j.error as { code?: unknown })?.code === 'number';
    const slug = typeof j?.error === 'string' && /^[a-z_]+$/.test(j.error) && typeof j.message === 'string';
    if (!slug && !rpcError) problems.push(`refusal ${status} without a slug: ${text.slice(0, 300)}`);
  }
  if (status < 400 && !isHead && type?.startsWith('application/json') && body.length > 0 && json === undefined) {
    problems.push(`${status} JSON answer that does not parse: ${text.slice(0, 200)}`);
  }
  return problems;
}

/** A request as a reader wants it in a failure: the head, and the body's start. */
export function describeRequest(request: FuzzRequest): string {
  const head = requestBytes({ ...request, body: undefined }).toString('latin1');
  const shortHead = head.length > 600 ? `${head.slice(0, 600)}… (${head.length} bytes)` : head;
  const body = request.body ? ` body[${request.body.length}, ${request.framing}]: ${JSON.stringify(request.body.toString('latin1').slice(0, 200))}` : '';
  return `${JSON.stringify(shortHead)}${body}`;
}
