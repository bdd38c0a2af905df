import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
const db = createPostgresDb({ connectionString: 'postgres://postgres@127.0.0.1:5432/tekil_probe_x' });
await migrate(db);
await db.query(`INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type)
       SELECT 'bench', 'evt_' || i, 'inv_' || i, 'invoice.paid', now() - interval '1 hour' + i * interval '1 millisecond',
              convert_to('{"event_id":"evt_' || i || '"}', 'UTF8'), 'application/json' FROM generate_series(1, 100000) AS i`);
await db.exec('VACUUM ANALYZE inbox_deliveries');
await db.close();
