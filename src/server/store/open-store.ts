// Opens the store a server was configured with (store-location.ts) and the
// per-address budgets that go with it: kept in this process beside the
// memory store, shared through Redis beside the Redis store (a budget per
// address must be one budget whichever server the call reaches), and where
// the webhooks live: in this process beside the memory store (the webhook
// service's own memory store), in Redis beside the Redis store.
import { Budget, type RequestBudget } from '../budgets/budget.js';
import type { ResolvedServerOptions } from '../server-options.js';
import type { MailStore, StoredMessage } from './mail-store.js';
import { MessageStore } from './message-store.js';
import type { SharedWebhookStore } from '../webhooks/webhook-store.js';

export interface OpenedStore {
  readonly store: MailStore;
  readonly listBudget: RequestBudget;
  readonly messageBudget: RequestBudget;
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
      store: new MessageStore({ clock, retention, maxMessages, ...hooks }),
      listBudget: new Budget(config.listPerSecond, clock),
      messageBudget: new Budget(config.messagePerSecond, clock),
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
    sharedWebhooks: () => store.webhooks(),
  };
}
