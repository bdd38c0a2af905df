// The layers of src/, as a machine checks them (`npm run lint:deps`). Each room names the rooms it may
// import; anything else is an upward or sideways import and fails the check. The map in
// docs/architecture.md is written from this file (`npm run docs:layers`); edit the rooms here.

/** Rooms, top to bottom. `uses` lists the rooms (by label) it may import; '*' is every room. */
const rooms = [
  { label: 'cli/', path: '^src/cli/', uses: ['*'], says: 'one file per command; the top layer: nothing imports it' },
  {
    label: 'index.ts runtime.ts app.ts api-reference.ts',
    path: '^src/(index|runtime|app|api-reference)\\.ts$',
    uses: ['*'],
    says: [
      'index.ts: the public library API (every export is a promise to users)',
      'runtime.ts: startTekil(): settings, store, migrations, services of the chosen roles, listen, shutdown',
      'app.ts: buildApp(): Fastify, server timeouts, the one error handler, health, metrics, role routes',
      'api-reference.ts: the API document as the whole app serves it, for docs/api.md and web/api-types.d.ts',
    ],
    not: ['cli/'],
  },
  {
    label: 'api/',
    path: '^src/api/',
    uses: ['tenants/', 'alerts/', 'audit/', 'auth/', 'dashboard/', 'inbox/', 'outbox/', 'reconcile/', 'config/', 'store/', 'settings.ts service.ts', 'kernel'],
    says: 'the admin HTTP API: route specs (path, permission, zod schemas) that register the routes and make the OpenAPI document; one file per area, input guards',
  },
  {
    label: 'tenants/',
    path: '^src/tenants/',
    uses: ['dashboard/', 'audit/', 'auth/', 'outbox/', 'config/', 'store/', 'settings.ts service.ts', 'kernel'],
    says: "the merchant's room: tenants and their settings, the scope a request reads or writes in, portal links, the portal's server side, the tenants' health page, a tenant's live delivery stream (their SQL: store/sql/tenants/)",
  },
  {
    label: 'dashboard/',
    path: '^src/dashboard/',
    uses: ['auth/', 'inbox/', 'outbox/', 'receiver/', 'store/', 'settings.ts service.ts', 'kernel'],
    says: 'what the panel needs on the server: stats, exports, the live event stream, serving web/ (api/ registers its routes; it never imports api/)',
  },
  { label: 'alerts/', path: '^src/alerts/', uses: ['outbox/', 'config/', 'store/', 'settings.ts service.ts', 'kernel'], says: 'alert rules, the evaluator (worker role) that opens and closes incidents, and their chat bodies; incidents go out through the outbox' },
  { label: 'supervisor/', path: '^src/supervisor/', uses: ['kernel'], says: '`tekil start --processes N`: the node:cluster supervisor (shared port, restarts with backoff, crash-loop give-up, drain on SIGTERM), the child side' },
  { label: 'prove/', path: '^src/prove/', uses: ['provider/', 'reconcile/', 'signing/', 'kernel'], says: "`tekil prove`: the scorecard's checks against a live receiver, its HTTP side, a provider's list for reconcile, the report formats" },
  { label: 'simulate/', path: '^src/simulate/', uses: ['outbox/', 'provider/', 'signing/', 'config/', 'store/', 'settings.ts service.ts', 'kernel'], says: '`tekil simulate`: invoice lifecycles, the fault proxy, the provider list API' },
  {
    label: 'auth/',
    path: '^src/auth/',
    uses: ['store/', 'settings.ts service.ts', 'kernel'],
    says: 'who is calling: the admin token, operators and their roles, browser sessions, and the check every admin request passes (bearer token, or session cookie with its CSRF token)',
  },
  { label: 'inbox/', path: '^src/inbox/', uses: ['retention/', 'store/', 'settings.ts service.ts', 'kernel'], says: 'what an operator does with received deliveries: list, show, replay, discard, and bulk replay or discard (one path for the panel\'s jobs and the CLI)' },
  { label: 'reconcile/', path: '^src/reconcile/', uses: ['audit/', 'lookup/', 'receiver/', 'config/', 'http/', 'signing/', 'store/', 'settings.ts service.ts', 'kernel'], says: "compare a source with the provider's own API: adapters (stripe, generic, github, paytr, iyzico), runs, findings, the schedule" },
  { label: 'audit/', path: '^src/audit/', uses: ['http/', 'store/', 'settings.ts service.ts', 'kernel'], says: 'the audit trail: one row per operator action (the admin API\'s hooks, the portal\'s links, the CLI\'s own store actions), written by one function (write.ts); the sign-in limit, what a row may say' },
  { label: 'provider/', path: '^src/provider/', uses: ['receiver/', 'signing/', 'kernel'], says: "a provider's invoices and each scheme's natural envelope (shared by simulate and prove)" },
  { label: 'receiver/', path: '^src/receiver/', uses: ['telemetry/', 'config/', 'http/', 'signing/', 'store/', 'settings.ts service.ts', 'kernel'], says: 'POST /in/:source: verify, extract ids, the group-commit batcher, ack deadline, body bytes in flight' },
  { label: 'worker/', path: '^src/worker/', uses: ['lookup/', 'telemetry/', 'config/', 'destinations/', 'http/', 'signing/', 'store/', 'settings.ts service.ts', 'kernel'], says: 'claim loops, batches, handlers, forwarding, retries, ordering guard, handler timeout' },
  { label: 'outbox/', path: '^src/outbox/', uses: ['retention/', 'telemetry/', 'config/', 'destinations/', 'http/', 'signing/', 'store/', 'settings.ts service.ts', 'kernel'], says: 'publish, endpoints and secrets, the dispatcher and its decisions, ladders, history' },
  {
    label: 'lookup/',
    path: '^src/lookup/',
    uses: ['config/', 'signing/', 'kernel'],
    says: "a payment read back from its provider's own API (PayTR's status query, iyzico's payment retrieve, Papara's payment get) and compared with a notification: used by confirm (worker/) and reconcile/",
  },
  {
    label: 'telemetry/',
    path: '^src/telemetry/',
    uses: ['config/', 'kernel'],
    says: 'opt-in OpenTelemetry tracing: tracing.ts, the one check a traced spot makes and the span helpers (types only); start.ts, loading the SDK on demand',
  },
  { label: 'retention/', path: '^src/retention/', uses: ['config/', 'store/', 'settings.ts service.ts', 'kernel'], says: 'the retention sweeper (worker role): trims bodies, deletes old settled records, in small batches' },
  {
    label: 'settings.ts service.ts',
    path: '^src/(settings|service)(\\.test)?\\.ts$',
    uses: ['config/', 'store/', 'kernel'],
    says: [
      'settings.ts: the environment, read once into ctx.settings (DATABASE_URL, data dir, keys, log level)',
      'service.ts: Context (config, settings, db, logger, metrics) and the Service lifecycle',
    ],
  },
  { label: 'config/', path: '^src/config/', uses: ['destinations/', 'http/', 'signing/', 'kernel'], says: 'the YAML schema (zod), units, env interpolation' },
  {
    label: 'destinations/',
    path: '^src/destinations/',
    uses: ['http/', 'kernel'],
    says: "the kinds of destination beyond HTTP: broker URLs (RabbitMQ, NATS JetStream, Redis Streams), their pooled connections and one publish with the broker's answer; shared by sending and forwarding",
  },
  { label: 'http/', path: '^src/http/', uses: ['kernel'], says: "shared by sending and forwarding: the HTTP poster, destination guard, CIDR and Retry-After parsers; the server's connection caps, its coded answers to malformed requests, and the reading and dropping of refused bodies" },
  { label: 'signing/', path: '^src/signing/', uses: ['kernel'], says: 'one file per signature scheme, sign + verify over raw bytes' },
  {
    label: 'store/',
    path: '^src/store/',
    uses: ['kernel'],
    says: [
      'db.ts: the Db interface; postgres.ts and pglite.ts are its adapters, pglite-thread.ts runs PGlite on a worker thread of its own',
      'open.ts: opening the store the settings point at, with the configuration\'s connection options (apart from db.ts, so no cycle)',
      'group-commit.ts: the group-commit queue under the receiver\'s inserts and the API\'s publishing',
      'migrations/: numbered, forward-only .sql files; schema.sql: what every migration builds, in one file (`npm run schema:dump`; a test keeps it current)',
      'sql/: every statement, in the area of the room it serves: alerts/, audit/, auth/, dashboard/, inbox/, outbox/, reconcile/, simulate/, tenants/, schema/ (the catalogue reads); the store\'s own at its top: advisory-lock.ts, health.ts, migrations.ts; sql/statement.ts: the one statement shape (see "Statements" below)',
      'distribution.ts: each table\'s placement on a sharded Postgres, and the written exceptions',
      'imports nothing of the domain it serves: types flow downward',
    ],
  },
  {
    label: 'kernel',
    path: '^src/(errors|errors-tr|logger|metrics|validation|json-path|raw-json|cursor|pg-error|scope)(\\.test)?\\.ts$',
    uses: [],
    says: [
      'errors.ts: the error catalogue: every code with its HTTP status and default message; errors-tr.ts: its messages in Turkish, for a caller asking with Accept-Language',
      'logger.ts, metrics.ts, validation.ts, json-path.ts, raw-json.ts, cursor.ts: what every room shares',
      'scope.ts: the Scope a tenant-owned list, detail or export reads in: every tenant, or one (required, so a list cannot forget it)',
      'pg-error.ts: reading SQLSTATEs, and which mean "the store is unavailable" (the error catalogue maps them)',
    ],
  },
];

const byLabel = new Map(rooms.map((r) => [r.label, r]));
const slug = (label) => label.replace(/[^a-z]+/gi, '-').replace(/^-|-$/g, '');

const layerRules = rooms.map((room) => {
  const allowed = room.uses.includes('*') ? rooms.filter((r) => !(room.not ?? []).includes(r.label)) : [room, ...room.uses.map((l) => byLabel.get(l))];
  if (allowed.some((r) => r === undefined)) throw new Error(`${room.label}: uses a room that is not listed`);
  const says = Array.isArray(room.says) ? room.says : [room.says];
  return {
    name: `layer-${slug(room.label)}`,
    severity: 'error',
    comment: `${room.label} | ${says.join(' | ')}`,
    from: { path: room.path, ...(room.pathNot ? { pathNot: room.pathNot } : {}) },
    to: { path: '^src/', pathNot: [...new Set(allowed.map((r) => r.path))] },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'no module imports itself through others, not even through type-only imports',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-stays-in-src',
      severity: 'error',
      comment: 'what ships imports nothing of the tests, benchmarks, scripts or examples',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts|examples)/' },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
