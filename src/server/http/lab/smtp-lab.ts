// The SMTP deferral lab's HTTP calls (docs/CONTRACT.md, "SMTP rules", an
// embedded-server extension): set, list and clear an address's rules, and
// read its attempt log. This file only reads the request (the `address`
// parameter, a rule's JSON body); the calls themselves, shared with the MCP
// tools, are rules/lab-calls.ts.
import type { IncomingMessage } from 'node:http';
import { Refusal } from '../../../contract/refusal.js';
import type { LabCalls } from '../../rules/lab-calls.js';
import { BODY_LIMITS, readBodyUpTo } from '../edge/body.js';
import { singleParam } from '../edge/params.js';

export type SmtpLabCall = 'rules' | 'addRule' | 'clearRules' | 'attempts';

const MAX_RULE_BODY = BODY_LIMITS.smtpRule;
const EXAMPLE = '{"kind": "greylist", "min_delay_ms": 2000}';

async function ruleBody(req: IncomingMessage): Promise<unknown> {
  const raw = await readBodyUpTo(req, MAX_RULE_BODY);
  if (raw === undefined) throw new Refusal(413, 'invalid_request', `A rule's body is at most ${MAX_RULE_BODY} bytes`);
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Refusal(400, 'invalid_request', `The body must be a JSON rule, like ${EXAMPLE}`);
  }
}

/** The answer's JSON body; refusals are thrown as `Refusal`. */
export async function answerSmtpLab(call: SmtpLabCall, params: URLSearchParams, req: IncomingMessage, calls: LabCalls): Promise<unknown> {
  const address = singleParam(params, 'address');
  switch (call) {
    case 'rules':
      return calls.rules(address);
    case 'addRule': {
      // A bad address is refused before the body is read.
      calls.checkAddress(address);
      return calls.addRule(address, await ruleBody(req));
    }
    case 'clearRules':
      return calls.clearRules(address);
    case 'attempts':
      return calls.attempts(address);
  }
}
