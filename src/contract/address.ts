// Mailbox addresses as both the SMTP intake and the HTTP API see them. One
// validator for both, so an address the API refuses can never receive mail and
// an address that receives mail can always be listed.

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\u0080-\\uFFFF-]+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const LABEL = /^[a-z0-9\u0080-\uffff](?:[a-z0-9\u0080-\uffff-]{0,61}[a-z0-9\u0080-\uffff])?$/i;

const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;
const MAX_DOMAIN_LENGTH = 253;

export interface MailboxAddress {
  /** The mailbox key: the whole address lower-cased (mailboxes are case-insensitive). */
  readonly key: string;
  /** The lower-cased domain. */
  readonly domain: string;
}

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
