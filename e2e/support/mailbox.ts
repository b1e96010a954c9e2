// Looking into the shared server from an outer spec, through the core's
// paced, retrying calls (an inner run may have listed the same address
// less than a second ago).
import { createInbox } from 'mailroomjs';
import { API_URL } from '../servers.js';

/** Subjects in a mailbox right now, sorted. */
export async function subjectsAt(address: string): Promise<string[]> {
  const inbox = await createInbox({ apiURL: API_URL, address, watermark: null });
  return (await inbox.messages()).map((m) => m.subject).sort();
}

/** Deletes a mailbox an inner run kept on purpose. */
export async function deleteMailbox(address: string): Promise<void> {
  const inbox = await createInbox({ apiURL: API_URL, address, watermark: null });
  await inbox.delete();
}
