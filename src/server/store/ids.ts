// Message ids: a global counter rendered as fixed-width base 36, so that ids sort
// by arrival (as strings and as numbers) within a mailbox and across the server.
// The counter is seeded from the start time, so a restarted server keeps issuing
// ids above the ones a client may still hold as a watermark.

export const ID_LENGTH = 11;
const ID_PATTERN = /^[0-9a-z]{11}$/;
// 1024 ids per millisecond of uptime before the next run could overlap: far
// beyond any intake rate, and it keeps the counter a safe integer until year 2248.
const IDS_PER_MS = 1024;

export type IdSource = () => string;

export function createIdSource(startMs: number): IdSource {
  let next = Math.max(0, Math.floor(startMs)) * IDS_PER_MS;
  return () => (next++).toString(36).padStart(ID_LENGTH, '0');
}

export function isWellFormedId(value: string): boolean {
  return ID_PATTERN.test(value);
}
