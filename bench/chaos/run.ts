import { startChaosCluster, PROVIDER_SECRET, roleGroups, type ChaosCluster, type RoleGroup } from './cluster.js';
import { checkChaos, type CheckResult } from './checks.js';
import { driveLoad, type LoadResult } from './load.js';
import { planChaos, seededRandom } from './plan.js';
import { forwardSink, outboxSink } from './sinks.js';

export interface ChaosOptions {
  events: number;
  /** A SIGKILL of a random tekil process every this many ms while the load runs. */
  killEveryMs: number;
  /** `pg_ctl stop -m immediate` + start, spread over the load. */
  pgRestarts: number;
  /** Stop killing after this many SIGKILLs (the CI version: one of each role group). */
  maxKills?: number;
  seed: number;
  /** Processes per role group (receiver, worker, dispatcher), each group under its own supervisor. */
  processes: number;
  concurrency: number;
  /** After the load, how long everything may take to settle. */
  settleTimeoutMs: number;
  log: (line: string) => void;
}

export interface ChaosReport {
  checks: CheckResult[];
  violations: string[];
  summary: string;
}

interface Kill {
  group: RoleGroup;
  pid: number;
  atMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Kills a random child of each group in turn (the groups in a shuffled order each round). */
async function killLoop(
  cluster: ChaosCluster,
  options: ChaosOptions,
  random: () => number,
  stop: () => boolean,
  kills: Kill[],
  started: number,
): Promise<void> {
  let round: RoleGroup[] = [];
  while (!stop()) {
    await sleep(options.killEveryMs);
    if (stop()) return;
    if (round.length === 0) round = [...roleGroups].sort(() => random() - 0.5);
    const group = round.shift()!;
    const pids = cluster.childPids(group);
    if (pids.length === 0) {
      const supervisor = cluster.groups[group].child;
      // Restarting right now: its turn comes again (unless its supervisor is gone; the checks report that).
      if (supervisor.exitCode === null && supervisor.signalCode === null) round.push(group);
      continue;
    }
    const pid = pids[Math.floor(random() * pids.length)]!;
    try {
      process.kill(pid, 'SIGKILL');
      kills.push({ group, pid, atMs: Date.now() - started });
      options.log(`  SIGKILL ${group} pid ${pid} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } catch {
      // it exited between the listing and the kill
    }
  }
}

async function restartPostgres(cluster: ChaosCluster, options: ChaosOptions, started: number): Promise<number> {
  const at = Date.now();
  options.log(`  postgres: stop -m immediate at ${((at - started) / 1000).toFixed(1)} s`);
  cluster.pg.crash();
  await sleep(2_000);
  cluster.pg.start();
  options.log(`  postgres: started again after ${((Date.now() - at) / 1000).toFixed(1)} s`);
  return Date.now() - at;
}

async function settled(cluster: ChaosCluster): Promise<boolean> {
  try {
    const { rows } = await cluster.db.query<{ open_inbox: number; open_outbox: number }>(
      `SELECT (SELECT count(*)::int FROM inbox_deliveries WHERE status NOT IN ('done', 'stale', 'dead')) AS open_inbox,
              (SELECT count(*)::int FROM outbox_deliveries WHERE status NOT IN ('succeeded', 'failed', 'cancelled')) AS open_outbox`,
    );
    return rows[0]!.open_inbox === 0 && rows[0]!.open_outbox === 0;
  } catch {
    return false; // the store is coming back
  }
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const plan = planChaos(options.events, options.seed);
  const random = seededRandom(options.seed ^ 0x5eed);
  options.log(
    `chaos: ${plan.events} events (${plan.invoices} invoices with 2 events each, ${plan.duplicated} duplicated), ${plan.sends.length} sends, seed ${options.seed}`,
  );
  const sinks = { outbox: await outboxSink(), forward: await forwardSink() };
  const startedCluster = Date.now();
  const cluster = await startChaosCluster({ forwardUrl: sinks.forward.url, outboxUrl: sinks.outbox.url, processesPerGroup: options.processes });
  options.log(
    `chaos: ${roleGroups.map((g) => `${options.processes} ${g}s`).join(', ')} up in ${((Date.now() - startedCluster) / 1000).toFixed(1)} s; receivers at ${cluster.url}`,
  );
  // Interrupted (Ctrl-C, a timeout): take the processes and the private cluster down with us.
  const interrupted = (signal: NodeJS.Signals) => {
    options.log(`chaos: ${signal}: stopping the cluster`);
    void cluster.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const kills: Kill[] = [];
  const restarts: Promise<number>[] = [];
  const started = Date.now();
  let loadDone = false;
  let load: LoadResult | undefined;
  let settleMs = 0;
  try {
    const thresholds = Array.from({ length: options.pgRestarts }, (_, i) => Math.floor(((i + 1) * plan.sends.length) / (options.pgRestarts + 1)));
    const everyGroupKilled = () => roleGroups.every((g) => kills.some((k) => k.group === g));
    const enoughKills = () => options.maxKills !== undefined && kills.length >= options.maxKills;
    const killing = killLoop(cluster, options, random, () => enoughKills() || (loadDone && everyGroupKilled()), kills, started);
    let lastReport = 0;
    load = await driveLoad(cluster.url, plan.sends, {
      secret: PROVIDER_SECRET,
      concurrency: options.concurrency,
      copyDeadlineMs: 120_000,
      onProgress(done) {
        if (thresholds[restarts.length] !== undefined && done >= thresholds[restarts.length]!) restarts.push(restartPostgres(cluster, options, started));
        if (Date.now() - lastReport > 10_000) {
          lastReport = Date.now();
          options.log(`  sent ${done}/${plan.sends.length}`);
        }
      },
    });
    loadDone = true;
    const loadMs = Date.now() - started;
    await Promise.all(restarts);
    await killing;
    options.log(`chaos: load done in ${(loadMs / 1000).toFixed(1)} s; waiting for every delivery to settle`);
    const settleStart = Date.now();
    while (!(await settled(cluster)) && Date.now() - settleStart < options.settleTimeoutMs) await sleep(500);
    settleMs = Date.now() - settleStart;
    const checks = await checkChaos(cluster.db, load, sinks);
    const exited = roleGroups.filter((g) => cluster.groups[g].child.exitCode !== null || cluster.groups[g].child.signalCode !== null);
    if (exited.length)
      checks.push({
        name: 'every supervisor still running',
        figures: '',
        violations: exited.map((g) => `the ${g} supervisor exited:\n${cluster.groups[g].output().slice(-2_000)}`),
      });
    const violations = checks.flatMap((c) => c.violations.map((v) => `${c.name}: ${v}`));
    const answers = [...load.answers]
      .sort()
      .map(([s, n]) => `${s} ×${n}`)
      .join(', ');
    const killsBy = roleGroups.map((g) => `${g} ${kills.filter((k) => k.group === g).length}`).join(', ');
    const summary = [
      `tekil chaos run — seed ${options.seed}`,
      `events ${plan.events} (duplicated ${plan.duplicated}), requests ${load.requests}: ${answers}; copies given up ${load.gaveUp}`,
      `load ${(loadMs / 1000).toFixed(1)} s, settled ${(settleMs / 1000).toFixed(1)} s later`,
      `SIGKILLs ${kills.length} (${killsBy}); postgres restarts (stop -m immediate) ${restarts.length}`,
      ...checks.map((c) => `${c.violations.length ? 'FAIL' : 'ok  '} ${c.name}: ${c.figures}`),
      violations.length ? `VIOLATIONS (${violations.length}):\n${violations.map((v) => `  - ${v}`).join('\n')}` : 'no violations',
    ].join('\n');
    return { checks, violations, summary };
  } finally {
    loadDone = true;
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await cluster.close();
    await sinks.outbox.close();
    await sinks.forward.close();
  }
}
