// tekil's receiver role, started as `tekil start --role receiver` would, without the CLI around it.
import { loadConfigFile } from '../../src/config/load.js';
import { startTekil } from '../../src/runtime.js';

const config = await loadConfigFile(process.env.BENCH_CONFIG!);
const running = await startTekil({ config, roles: new Set(['receiver']), port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
