// Opens the store a server was configured with (store-location.ts) and the
// per-address budgets, the SMTP deferral lab's state and the webhooks that
// go with it: kept in this process beside the memory store, shared through
// Redis beside the Redis store (a budget per address must be one budget, an
// address's rules one set of rules, and a webhook one webhook, whichever
// server the call reaches). Beside the memory store the webhook service
// keeps its own memory store.
import { Budget, type RequestBudget } from './budgets/budget.js';
import type { LabStore } from './rules/lab-store.js';
import { MemoryLabStore } from './rules/memory-lab.js';
import type { ResolvedServerOptions } from './server-options.js';
import type { MailStore } from './store/mail-store.js';
import type { StoredMessage } from './base/stored-message.js';
import { MessageStore } from './store/message-store.js';
import type { SharedWebhookStore } from './webhooks/webhook-store.js';

export interface OpenedStore {
  readonly store: MailStore;
  readonly listBudget: RequestBudget;
  readonly messageBudget: RequestBudget;
  /** The deferral lab's state (asked for only when the lab is on). */
  readonly lab: () => LabStore;
  /** The webhooks' shared store, opened only when webhooks are on; undefined beside the memory store (each server keeps its own). */
  readonly sharedWebhooks: (() => Promise<SharedWebhookStore>) | undefined;
}

export interface StoreHooks {
  readonly onEvict: (message: StoredMessage) => void;
  readonly onListenerError: (error: unknown) => void;
}

export async function openStore(config: ResolvedServerOptions, hooks: StoreHooks): Promise<OpenedStore> {
  const { clock, retention, maxMessages } = config;
  if (config.store.kind === 'memory') {
    return {
      store: new MessageStore({ clock, retention, maxMessages, maxStoreBytes: config.maxStoreBytes, ...hooks }),
      listBudget: new Budget(config.listPerSecond, clock),
      messageBudget: new Budget(config.messagePerSecond, clock),
      lab: () => new MemoryLabStore({ clock, retention }),
      sharedWebhooks: undefined,
    };
  }
  // Loaded only when asked for: a server on the memory store never loads the Redis client.
  const { RedisMailStore } = await import('./redis/redis-store.js');
  const store = await RedisMailStore.open({
    url: config.store.url,
    prefix: config.store.prefix,
    clock,
    retention,
    maxMessages,
    logger: config.logger,
    ...hooks,
  });
  return {
    store,
    listBudget: store.budget('list', config.listPerSecond),
    messageBudget: store.budget('message', config.messagePerSecond),
    lab: () => store.lab(),
    sharedWebhooks: () => store.webhooks(),
  };
}
