// The embedded mail server's public surface. Every export is listed explicitly.
export { startServer } from './start-server.js';
export type { MailroomServer } from './start-server.js';
export type { ServerOptions, StaticWebhook, WallClock } from './server-options.js';
export type { Logger } from './log.js';
export type { Fault, FaultInjection, FaultRoute, RequestStats } from './http/faults.js';
