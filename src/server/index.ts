// The embedded mail server's public surface. Every export is listed explicitly.
export { startServer } from './start-server.js';
export type { MailroomServer } from './start-server.js';
export type { ProviderSettings } from '../contract/provider-settings.js';
export type { ServerOptions, StaticWebhook } from './server-options.js';
export type { WallClock } from './base/clock.js';
export type { Logger } from './base/log.js';
export type { Fault, FaultInjection, FaultRoute, RequestStats } from './http/test-hooks/faults.js';
