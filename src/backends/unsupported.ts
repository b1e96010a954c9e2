// What a catcher cannot do is said, not faked: the embedded server's
// extensions (the SMTP deferral lab, webhooks) refused at once, with the
// slug `unsupported`, naming the backend and what to use instead.
import { MailroomError } from '../client/errors.js';
import type { BackendName } from './backend.js';

export type ExtensionFeature = 'smtp-lab' | 'webhooks';

const WHAT: Readonly<Record<ExtensionFeature, { readonly name: string; readonly instead: string }>> = {
  'smtp-lab': {
    name: 'the SMTP deferral lab (inbox.smtp: greylist, throttle, defer, reject, slow, disconnect, attempts)',
    instead:
      "run this test against mailroom's embedded server (`backend: 'mailroom'`, `mailroom serve`), whose SMTP answers can be scripted per address; the catcher accepts every mail at once",
  },
  webhooks: {
    name: 'webhooks (inbox.webhooks.add)',
    instead:
      "run this test against mailroom's embedded server (`backend: 'mailroom'`, `mailroom serve`), which posts signed events with retries; or test the app's webhook handler against the catcher's own notification (Mailpit: its webhook setting, --webhook-url)",
  },
};

/** The refusal of an extension on `backend` at `apiURL`. */
export function unsupported(backend: BackendName, apiURL: string, feature: ExtensionFeature, address?: string): MailroomError {
  const { name, instead } = WHAT[feature];
  return new MailroomError(`${backend} at ${apiURL} does not offer ${name}: it is an extension of mailroom's embedded server. Instead, ${instead}.`, {
    slug: 'unsupported',
    address,
  });
}
