// A provider's send call, answered the one way every provider's is: the
// provider's auth header checked for its shape (any key is taken), the body
// read under its cap and read as sends by the dialect, every send prepared
// by the intake (the lab may hold the answer, or refuse the send), the call
// refused whole when a refusal is the whole call's, else each send stored,
// the attempts logged with the status the dialect answers them with, and
// the answer sent once the log holds them - or, for a disconnect rule, the
// connection dropped with no answer at all.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiCaller, ApiIntake, SendOutcome, TakenSend } from '../../providers/api-intake.js';
import { ApiFailureError, type ApiFailure } from '../../providers/api-send.js';
import type { Reply } from '../edge/reply.js';
import { attemptText, headerValue, type BatchRule, type ProviderOperation, type ProviderRequest, type SendResult } from './provider-operation.js';
import { readProviderBody } from './request-body.js';

export interface ProviderCallsContext {
  readonly intake: ApiIntake;
  /** The most a call's body may be, in bytes (request-body.ts bodyCapFor). */
  readonly bodyCap: number;
  /** Wall-clock ms. */
  readonly now: () => number;
}

/** A refusal that is the whole call's at every provider: the request is refused, not one of its mails. */
function refusesCall(outcome: SendOutcome): boolean {
  if (outcome.kind === 'dropped') return true;
  return outcome.kind === 'failed' && (outcome.failure.kind === 'rate_limited' || outcome.failure.kind === 'unavailable');
}

/** The answer to a provider call, or undefined when the connection was dropped without one. */
export async function answerProvider(
  ctx: ProviderCallsContext,
  operation: ProviderOperation,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<Reply | undefined> {
  const caller: ApiCaller = {
    provider: operation.provider,
    clientIp: req.socket.remoteAddress ?? '',
    userAgent: headerValue(req.headers, 'user-agent'),
    beganAt: ctx.now(),
  };
  const authProblem = operation.authProblem(req.headers);
  if (authProblem !== undefined) {
    // The body is not read: drained, so the refusal reaches a client still sending.
    req.resume();
    return operation.refuse({ kind: 'auth', detail: authProblem });
  }
  let request: ProviderRequest;
  let parsed;
  try {
    request = { path: new URL(req.url ?? '/', 'http://x').pathname, headers: req.headers, body: await readProviderBody(req, operation.body, ctx.bodyCap) };
    parsed = await operation.parse(request);
  } catch (error) {
    if (error instanceof ApiFailureError) return operation.refuse(error.failure);
    throw error;
  }

  const { intake } = ctx;
  // Each step for every mail of the call before the next: a refusal that is the call's comes before anything is stored.
  let taken: (TakenSend | ApiFailure)[] = [];
  for (const send of parsed.sends) taken.push('kind' in send ? send : await intake.prepare(send, caller, signal));
  let refused = await refusedWhole(ctx, operation, parsed.batch, taken, caller, res);
  if (refused) return refused.reply;
  taken = await Promise.all(taken.map((t) => ('kind' in t ? Promise.resolve(t) : intake.compose(t))));
  refused = await refusedWhole(ctx, operation, parsed.batch, taken, caller, res);
  if (refused) return refused.reply;
  const done: (TakenSend | ApiFailure)[] = [];
  for (const t of taken) {
    // Under `all`, once a mail could not be stored (the store failed) no later one is.
    const stopped = parsed.batch === 'all' && done.some((d) => !('kind' in d) && d.outcome.kind === 'failed');
    done.push('kind' in t || stopped ? t : await intake.store(t));
  }

  const results: SendResult[] = done.map((t) =>
    'kind' in t ? { send: undefined, outcome: { kind: 'failed', failure: t } } : { send: t.send, outcome: t.outcome },
  );
  // A mail of an all-or-nothing call that could not be stored (the store failed): the call is answered with that failure.
  const lost = parsed.batch === 'all' ? results.find((r) => r.outcome.kind === 'failed') : undefined;
  const reply = lost?.outcome.kind === 'failed' ? operation.refuse(lost.outcome.failure) : operation.answer(results, request);
  for (const t of done) {
    if ('kind' in t) continue;
    const status = t.outcome.kind === 'failed' ? operation.refuse(t.outcome.failure).status : reply.status;
    intake.log(t, caller, status, attemptText(t.outcome, t.send.stamp.id));
  }
  await intake.flushed();
  return reply;
}

/**
 * When the call is refused whole - a rate limit, an outage or a drop
 * anywhere in it, or under `all` any failure at all - its attempts logged
 * and its answer (undefined for a drop: the connection is closed); else undefined.
 */
async function refusedWhole(
  ctx: ProviderCallsContext,
  operation: ProviderOperation,
  batch: BatchRule,
  taken: readonly (TakenSend | ApiFailure)[],
  caller: ApiCaller,
  res: ServerResponse,
): Promise<{ readonly reply: Reply | undefined } | undefined> {
  const { intake } = ctx;
  const prepared = taken.filter((t): t is TakenSend => !('kind' in t));
  const unreadable = batch === 'all' ? taken.find((t): t is ApiFailure => 'kind' in t) : undefined;
  const whole = prepared.find((t) => refusesCall(t.outcome)) ?? (batch === 'all' ? prepared.find((t) => t.outcome.kind === 'failed') : undefined);
  if (!whole && !unreadable) return undefined;
  if (whole?.outcome.kind === 'dropped') {
    for (const t of prepared) intake.log(t, caller, undefined, whole.outcome.text);
    await intake.flushed();
    res.destroy();
    return { reply: undefined };
  }
  const failure = unreadable ?? (whole!.outcome as Extract<SendOutcome, { kind: 'failed' }>).failure;
  const reply = operation.refuse(failure);
  const rule = whole?.outcome.kind === 'failed' ? whole.outcome.rule : undefined;
  for (const t of prepared) intake.log({ ...t, outcome: { kind: 'failed', failure, rule } }, caller, reply.status, failure.detail);
  await intake.flushed();
  return { reply };
}
