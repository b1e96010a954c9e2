// What an inbox tells its observers (`onEvent`) and report steps
// (`aroundWait`) about each wait.
import type { PollEvent } from '../wait/strategy.js';
import type { SourceLocation } from './call-site.js';
import type { WaitKind } from './describe.js';
import type { MailFilter } from './filter.js';
import type { Mail } from './mail.js';

/** What a wait is, for observers and report steps. */
export interface WaitInfo {
  /** Increases with every wait on this inbox. */
  readonly id: number;
  readonly kind: WaitKind;
  /** `Wait for mail to a@mailroom.test with subject ~ "Confirm"` */
  readonly title: string;
  readonly address: string;
  /** The filter in words; `any mail` when empty. */
  readonly filter: string;
  readonly filterSpec: Readonly<MailFilter>;
  /** The budget (`expectMail`) or quiet period (`expectNoMail`), in ms. */
  readonly budgetMs: number;
  /** How many mails the wait wants (0 for `expectNoMail`). */
  readonly count: number;
  /**
   * Where the wait was called: the test's line (or its helper's), so a
   * report step can point there. Undefined when the caller's frames hold
   * none outside mailroom and its dependencies.
   */
  readonly calledFrom: SourceLocation | undefined;
}

export type InboxEvent =
  | { readonly type: 'wait-start'; readonly wait: WaitInfo }
  | (PollEvent & { readonly wait: WaitInfo })
  | {
      readonly type: 'wait-end';
      readonly wait: WaitInfo;
      readonly outcome: 'received';
      readonly mails: readonly Mail[];
      readonly elapsedMs: number;
      readonly checks: number;
    }
  | { readonly type: 'wait-end'; readonly wait: WaitInfo; readonly outcome: 'quiet'; readonly elapsedMs: number; readonly checks: number }
  | { readonly type: 'wait-end'; readonly wait: WaitInfo; readonly outcome: 'failed'; readonly error: Error; readonly elapsedMs: number };
