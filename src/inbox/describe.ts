// Sentences about a wait, for reports: both runner adapters title their
// steps with these, so a wait reads the same in Playwright and in Vitest.
import { compileFilter, type MailFilter } from './filter.js';
import { formatDuration } from '../client/messages.js';

export type WaitKind = 'expectMail' | 'expectMails' | 'expectNoMail';

export interface DescribeWaitOptions {
  readonly kind?: WaitKind | undefined;
  /** How many mails `expectMails` wants. */
  readonly count?: number | undefined;
  /** The quiet period of `expectNoMail`, in ms. */
  readonly within?: number | undefined;
}

/**
 * `Wait for mail to a@mailroom.test with subject ~ "Confirm"`,
 * `Wait for 2 mails to a@mailroom.test`,
 * `Expect no mail to a@mailroom.test with subject ~ "Error" for 2 s`.
 */
export function describeWait(address: string, filter?: MailFilter | string, options: DescribeWaitOptions = {}): string {
  const description = typeof filter === 'string' ? filter : compileFilter(filter).description;
  const withFilter = description === 'any mail' ? '' : ` with ${description}`;
  const kind = options.kind ?? (options.count !== undefined && options.count !== 1 ? 'expectMails' : 'expectMail');
  if (kind === 'expectNoMail') {
    const within = options.within === undefined ? '' : ` for ${formatDuration(options.within)}`;
    return `Expect no mail to ${address}${withFilter}${within}`;
  }
  const count = options.count ?? 1;
  return count === 1 ? `Wait for mail to ${address}${withFilter}` : `Wait for ${count} mails to ${address}${withFilter}`;
}
