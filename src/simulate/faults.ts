import { TekilError } from '../errors.js';
import type { SimulatorFaults } from './simulator.js';

/** Every fault at once, at rates that keep a run short but make each fault happen many times. */
export const allFaults: SimulatorFaults = { drop: 0.03, delay: 0.02, duplicate: 0.05, reorder: 0.1, replay: 0.03, rotate: true };

const rateNames = ['drop', 'delay', 'duplicate', 'reorder', 'replay'] as const;

/**
 * Reads `drop=0.05,delay=0.02,duplicate=0.05,reorder=0.1,replay=0.03,rotate` (any subset; `all` for
 * every fault at its default rate, `none` for none). A rate is a share from 0 to 1.
 */
export function parseFaults(text: string): SimulatorFaults {
  const faults: SimulatorFaults = { drop: 0, delay: 0, duplicate: 0, reorder: 0, replay: 0, rotate: false };
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    if (part === 'all') {
      Object.assign(faults, allFaults);
      continue;
    }
    if (part === 'none') continue;
    if (part === 'rotate') {
      faults.rotate = true;
      continue;
    }
    const [name, value, ...rest] = part.split('=');
    const rate = Number(value);
    if (rest.length > 0 || !(rateNames as readonly string[]).includes(name ?? '') || value === undefined || !(rate >= 0 && rate <= 1)) {
      throw new TekilError('VALIDATION_FAILED', `--faults: cannot read "${part}"`, {
        hint: `use ${rateNames.map((n) => `${n}=<0..1>`).join(',')},rotate — or all, or none`,
      });
    }
    faults[name as (typeof rateNames)[number]] = rate;
  }
  return faults;
}
