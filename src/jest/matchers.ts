// `expect(inbox).toReceiveMail()` and the other matchers for Jest: the
// core's set for Jest-style `expect`s (runner/expect-matchers.ts) registered
// on the test file's `expect`, and Jest's `Matchers` pointed at its types.
// `@jest/globals` is the test file's own (Jest hands every file its copy,
// in CommonJS and in native ESM alike), so this works with or without
// Jest's injected globals.
import { expect } from '@jest/globals';
import { mailroomMatchers, type MailroomMatchers } from '../runner/expect-matchers.js';
import { mailSnapshotSerializer } from '../runner/mail-serializer.js';

expect.extend(mailroomMatchers);
// `expect(mail).toMatchSnapshot()` stores `mail.snapshot()`.
expect.addSnapshotSerializer(mailSnapshotSerializer);

/**
 * Jest's matchers with mailroom's, for a project that types `expect`
 * through `@types/jest`'s global `jest` namespace rather than
 * `@jest/globals` (mailroom declares no globals, so that one line is yours):
 *
 * ```ts
 * declare global { namespace jest { interface Matchers<R, T> extends MailroomJestMatchers<T> {} } }
 * ```
 */
export interface MailroomJestMatchers<T> extends MailroomMatchers<T> {}

declare module 'expect' {
  // Declared as the `expect` package declares it (Jest 29 and 30), `R` unused here.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface Matchers<R extends void | Promise<void>, T = unknown> extends MailroomMatchers<T> {}
}
