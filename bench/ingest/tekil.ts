// tekil, started as `tekil start` would, without the CLI around it: the receiver role alone by default,
// every role (what `npm start` runs) with BENCH_ROLES=all.
import { loadConfigFile } from '../../src/config/load.js';
import { startTekil } from '../../src/runtime.js';
import { roleNames, type Role } from '../../src/service.js';

const config = await loadConfigFile(process.env.BENCH_CONFIG!);
const roles: Role[] = process.env.BENCH_ROLES === 'all' ? [...roleNames] : ['receiver'];
const running = await startTekil({ config, roles: new Set(roles), port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
