// Whose mail is it, on a catcher that keeps one store for every address:
// the exact recipient match the embedded server makes by keeping one
// mailbox per address, and the teardown's question "is this mail this
// address's alone?". Case as the embedded server treats it: mailbox keys
// are the address lower-cased (docs/CONTRACT.md, "Addresses").

/** The mailbox key of an address. */
export function mailboxKey(address: string): string {
  return address.trim().toLowerCase();
}

/** True when `address` is one of `recipients`, exactly (no substring), case-insensitively. */
export function isRecipient(recipients: readonly string[], address: string): boolean {
  const key = mailboxKey(address);
  return recipients.some((r) => mailboxKey(r) === key);
}

/**
 * True when every recipient is `address`: deleting the mail takes nothing
 * from another test. A mail that also went to another address stays on the
 * catcher at teardown (docs/backends.md, "What a shared mail does").
 */
export function isAddressedAlone(recipients: readonly string[], address: string): boolean {
  const key = mailboxKey(address);
  return recipients.length > 0 && recipients.every((r) => mailboxKey(r) === key);
}

const PREVIEW_LENGTH = 100;

/** A short excerpt for a summary, as the embedded server makes one: whitespace collapsed, cut at a word. */
export function previewOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= PREVIEW_LENGTH) return flat;
  const cut = flat.slice(0, PREVIEW_LENGTH - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > PREVIEW_LENGTH / 2 ? cut.slice(0, space) : cut}…`;
}

/** `Name <address>` or the bare address, as the embedded server shows a sender. */
export function formatMailbox(entry: { readonly name?: string | null | undefined; readonly address?: string | null | undefined } | undefined): string {
  if (!entry?.address) return '';
  const name = (entry.name ?? '').replace(/\s+/g, ' ').trim();
  return name ? `${name} <${entry.address}>` : entry.address;
}
