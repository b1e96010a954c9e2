// The embedded mail server's public surface. Every export is listed explicitly.
export { startServer } from './server.js';
export type { MailroomServer } from './server.js';
export type { ServerOptions, Clock } from './options.js';
export type { Logger } from './log.js';
export type { Fault, FaultInjection, FaultRoute, RequestStats } from './faults.js';
