// What the attempt log keeps of a mail's headers: its Message-ID and its
// decoded Subject, from the header block alone.
import { describe, expect, it } from 'vitest';
import { mailIdentity } from '../../src/server/store/mail-identity.js';

const raw = (text: string) => Buffer.from(text, 'latin1');

describe('mailIdentity', () => {
  it('reads Message-ID and Subject, unfolded, whatever their case', () => {
    expect(mailIdentity(raw('From: a@x\r\nsubject: Your\r\n code\r\nMESSAGE-ID:\r\n <abc@x.example>\r\n\r\nBody\r\nMessage-ID: <not-this>\r\n'))).toEqual({
      messageId: '<abc@x.example>',
      subject: 'Your code',
    });
  });

  it('decodes an encoded subject, and says nothing of headers that are not there or only in the body', () => {
    expect(mailIdentity(raw('Subject: =?UTF-8?B?T2zDoQ==?=\n\nhi')).subject).toBe('Olá');
    expect(mailIdentity(raw('From: a@x\r\n\r\nSubject: in the body\r\n'))).toEqual({ messageId: undefined, subject: undefined });
    expect(mailIdentity(raw('no headers at all'))).toEqual({ messageId: undefined, subject: undefined });
  });
});
