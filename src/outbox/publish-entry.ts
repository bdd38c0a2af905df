// `tekil/publish`: what an application that only publishes needs, and nothing more. It loads the
// outbox's insert and its SQL, never the server, the panel, the exports (exceljs, pdfkit) or the
// embedded store; test/publish-entry.test.ts checks that in a fresh process.
export { publish, OUTBOX_CHANNEL, type PublishInput, type PublishResult, type ExtraDestination, type SqlExecutor } from './publish.js';
export { TekilError, isTekilError, type ErrorCode } from '../errors.js';
