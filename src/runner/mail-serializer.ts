// `expect(mail).toMatchSnapshot()`: a snapshot serializer, in the shape both
// Vitest's and Jest's `expect.addSnapshotSerializer` take, that stores a
// `Mail` as `mail.snapshot()` renders it (inbox/mail-snapshot.ts), so a
// mail's snapshot is readable text with its per-run values masked instead
// of the object's every field (a new address, code and date each run).
// Storing, comparing and `-u` stay the runner's own; with options (masks,
// headers), snapshot the text: `expect(mail.snapshot(options)).toMatchSnapshot()`.
import { Mail } from '../inbox/mail.js';

/** Serializes a `Mail` as its default `mail.snapshot()`. */
export const mailSnapshotSerializer = Object.freeze({
  test: (value: unknown): boolean => value instanceof Mail,
  serialize: (value: Mail): string => value.snapshot().trimEnd(),
});
