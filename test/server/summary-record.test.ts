// The summary as the Redis store keeps it (src/server/redis/summary-record.ts).
import { describe, expect, it } from 'vitest';
import { decodeSummary, encodeSummary } from '../../src/server/redis/summary-record.js';

const summary = { from: 'Acme <noreply@acme.example>', to: ['a@x.test', 'b@x.test'], subject: 'Grüße, "quoted"', preview: 'Hello…' };

describe('the Redis summary record', () => {
  it('comes back as it went in, and is shorter than the summary as an object', () => {
    const encoded = encodeSummary(summary);
    expect(decodeSummary(encoded)).toEqual(summary);
    expect(encoded.length).toBeLessThan(JSON.stringify(summary).length - 30);
  });

  it('reads a summary an earlier server wrote as an object', () => {
    expect(decodeSummary(JSON.stringify(summary))).toEqual(summary);
  });
});
