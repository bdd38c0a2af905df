// tekil, started as `tekil start` would, without the CLI around it: the receiver role alone by default,
// BENCH_ROLES=all for every role (what `npm start` runs), or a comma list of roles (e.g. api).
import { loadConfigFile } from '../../src/config/load.js';
import { startTekil } from '../../src/runtime.js';
import { roleNames, type Role } from '../../src/service.js';

const config = await loadConfigFile(process.env.BENCH_CONFIG!);
const wanted = process.env.BENCH_ROLES ?? 'receiver';
const roles: Role[] = wanted === 'all' ? [...roleNames] : (wanted.split(',') as Role[]);
const running = await startTekil({ config, roles: new Set(roles), port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
