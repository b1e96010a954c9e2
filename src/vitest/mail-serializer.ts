// Registers the core's `Mail` snapshot serializer (runner/mail-serializer.ts)
// on Vitest's `expect` when mailroomjs/vitest is imported.
import { expect } from 'vitest';
import { mailSnapshotSerializer } from '../runner/mail-serializer.js';

expect.addSnapshotSerializer(mailSnapshotSerializer);
