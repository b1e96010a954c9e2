// `expect(mail).toMatchSnapshot()` in Vitest: a snapshot serializer that
// stores a `Mail` as `mail.snapshot()` renders it (the core's
// mail-snapshot.ts), registered when mailroomjs/vitest is imported, so a
// mail's snapshot is readable text with its per-run values masked instead
// of the object's every field (a new address, code and date each run).
// Storing, comparing and `-u` stay Vitest's own; with options (masks,
// headers), snapshot the text: `expect(mail.snapshot(options)).toMatchSnapshot()`.
import { expect, type SnapshotSerializer } from 'vitest';
import { Mail } from '../inbox/mail.js';

/** Serializes a `Mail` as its default `mail.snapshot()`. */
const mailSnapshotSerializer: SnapshotSerializer = {
  test: (value: unknown) => value instanceof Mail,
  serialize: (value: Mail) => value.snapshot().trimEnd(),
};

expect.addSnapshotSerializer(mailSnapshotSerializer);
