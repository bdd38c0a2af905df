// tekil's public library API. Keep it small and explicit: every export here is a promise to users.
export { startTekil, type StartOptions, type RunningTekil } from './runtime.js';
export { buildApp, type AppOptions } from './app.js';
export { loadConfigFile, parseConfig, defineConfig, type TekilConfig, type ConfigInput, type SourceConfig } from './config/index.js';
export { openStore, type OpenStoreOptions } from './store/open.js';
export { migrate } from './store/migrate.js';
export type { Db, Queryable, QueryResult } from './store/db.js';
export { TekilError, errorCatalogue, type ErrorCode } from './errors.js';
export { createScheme, type SignatureScheme, type SignInput, type VerifyInput, type VerifyResult, type IncomingHeaders } from './signing/index.js';
export {
  publish,
  OUTBOX_CHANNEL,
  type PublishInput,
  type PublishResult,
  type ExtraDestination,
  type SqlExecutor,
} from './outbox/publish.js';
export { ladderPresets, ladderGapsMs, type LadderPreset, type LadderSpec } from './outbox/ladders.js';
export type { Endpoint, OutboxDelivery, OutboxAttempt, OutboxDeliveryStatus, EndpointScheme } from './outbox/types.js';
export {
  defineHandlers,
  HandlerRegistry,
  PermanentError,
  type Handler,
  type HandlerContext,
  type HandlerOptions,
  type HandlerResult,
  type InboxEvent,
  type PayloadSchema,
} from './worker/handlers.js';
export { createInboxWorker, type InboxWorker, type WorkerOptions } from './worker/worker.js';
export type { Role, Service, Context } from './service.js';
export { resolveSettings, type TekilSettings, type SecretKeySource, type LogLevel } from './settings.js';
