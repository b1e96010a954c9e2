// The walk down to the watermark, page by page, with scripted pages.
import { describe, expect, it } from 'vitest';
import type { MailSummary } from '../../src/client/messages.js';
import { walkToWatermark } from '../../src/inbox/listing-walk.js';

/** Messages n..1, newest first, one second apart. */
const mailbox = (n: number): MailSummary[] =>
  Array.from({ length: n }, (_, i) => {
    const k = n - i;
    return { id: `m${String(k).padStart(4, '0')}`, from: '', to: [], subject: `Mail ${k}`, preview: '', receivedAt: new Date(k * 1000), size: 1 };
  });

function service(all: readonly MailSummary[], limit: number, { ignoreBeforeId = false } = {}) {
  const pages: string[] = [];
  return {
    pages,
    first: all.slice(0, limit),
    page: async (beforeId: string) => {
      pages.push(beforeId);
      return (ignoreBeforeId ? all : all.filter((m) => m.id < beforeId)).slice(0, limit);
    },
  };
}

describe('walkToWatermark', () => {
  it('asks for nothing more when the first listing reaches the watermark or runs short', async () => {
    const all = mailbox(10);
    const paging = async () => {
      throw new Error('not asked');
    };
    const page = async () => [];
    expect(await walkToWatermark(all.slice(0, 5), { limit: 5, mark: { id: 'm0006', receivedAt: undefined }, paging, page })).toEqual({
      messages: all.slice(0, 5),
      cut: undefined,
    });
    expect((await walkToWatermark(all.slice(0, 4), { limit: 5, mark: null, paging, page })).cut).toBeUndefined();
  });

  it('pages down to the watermark, or to where it was when it is gone, and stops there', async () => {
    const all = mailbox(23);
    const s = service(all, 5);
    const walked = await walkToWatermark(s.first, { limit: 5, mark: { id: 'm0009', receivedAt: undefined }, paging: async () => true, page: s.page });
    expect(walked.cut).toBeUndefined();
    expect(s.pages).toEqual(['m0019', 'm0014']);
    expect(walked.messages.map((m) => m.id)).toEqual(all.slice(0, 15).map((m) => m.id));

    const gone = service(
      all.filter((m) => m.id !== 'm0009'),
      5,
    );
    const byTime = await walkToWatermark(gone.first, {
      limit: 5,
      mark: { id: 'm0009', receivedAt: new Date(9000) },
      paging: async () => true,
      page: gone.page,
    });
    expect(byTime.cut).toBeUndefined();
    expect(gone.pages).toEqual(['m0019', 'm0014']);
  });

  it('says where it stopped when the service offers no paging, or answers the same page again', async () => {
    const all = mailbox(12);
    const none = service(all, 5);
    expect((await walkToWatermark(none.first, { limit: 5, mark: null, paging: async () => false, page: none.page })).cut).toEqual({ listed: 5, paging: false });
    expect(none.pages).toEqual([]);
    const deaf = service(all, 5, { ignoreBeforeId: true });
    const walked = await walkToWatermark(deaf.first, { limit: 5, mark: null, paging: async () => true, page: deaf.page });
    expect(walked.cut).toEqual({ listed: 5, paging: true });
    expect(deaf.pages).toEqual(['m0008']);
  });
});
