// What a mailbox address is, for both halves: the SMTP intake and the HTTP
// API on the server, `createInbox({ address })` on the client. One rule, so
// an address the API refuses can never receive mail, and an address that
// receives mail can always be listed and waited on.
//
// Internationalised addresses (RFC 6531) are accepted: the local part is a
// dot-atom whose characters may also be any from U+0080 up, and a domain
// label may be a U-label. Apps that support them need to test them, and the
// server takes such mail over SMTP, so refusing them anywhere would lose mail.

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\u0080-\\uFFFF-]+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const LABEL = /^[a-z0-9\u0080-\uffff](?:[a-z0-9\u0080-\uffff-]{0,61}[a-z0-9\u0080-\uffff])?$/i;

export const MAX_ADDRESS_LENGTH = 254;
export const MAX_LOCAL_LENGTH = 64;
export const MAX_DOMAIN_LENGTH = 253;

export interface MailboxAddress {
  /** The mailbox key: the whole address lower-cased (mailboxes are case-insensitive). */
  readonly key: string;
  /** The lower-cased domain. */
  readonly domain: string;
}

/** Dot-separated labels of letters, digits and inner hyphens, 253 characters at most. */
export function isDomainName(value: string): boolean {
  if (value.length === 0 || value.length > MAX_DOMAIN_LENGTH) return false;
  return value.split('.').every((label) => LABEL.test(label));
}

/** Parses `local@domain`; undefined when it is not a well-formed address. */
export function parseMailboxAddress(value: string): MailboxAddress | undefined {
  if (value.length === 0 || value.length > MAX_ADDRESS_LENGTH) return undefined;
  const at = value.lastIndexOf('@');
  if (at <= 0 || at > MAX_LOCAL_LENGTH) return undefined;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  if (!LOCAL_PART.test(local) || !isDomainName(domain)) return undefined;
  return { key: value.toLowerCase(), domain };
}
