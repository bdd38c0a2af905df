import { TekilError } from '../errors.js';

/** Which cap a refused stream met. */
export type StreamCap = 'tenant' | 'session' | 'address';

/**
 * Counts open event streams by key (a tenant, a credential, a client address) in this process and refuses
 * one past a cap with `429 TOO_MANY_STREAMS`: a stream holds a socket and a share of its tenant's poll for
 * as long as it stays open, so one client's many streams must not become everyone's load.
 */
export class StreamLimits {
  private readonly open = new Map<string, number>();

  /** Takes one place under each cap, or none and throws; the answer gives them back. */
  acquire(keys: Array<{ cap: StreamCap; key: string; limit: number }>): () => void {
    for (const { cap, key, limit } of keys) {
      const held = this.open.get(`${cap}\u0000${key}`) ?? 0;
      if (held >= limit) {
        throw new TekilError('TOO_MANY_STREAMS', `${held} event streams are already open for this ${cap} (at most ${limit})`, {
          hint:
            cap === 'tenant'
              ? "close a stream first, or ask the operator to raise the tenant's streams quota"
              : 'close a stream first: one stream per page is enough',
        });
      }
    }
    for (const { cap, key } of keys) this.open.set(`${cap}\u0000${key}`, (this.open.get(`${cap}\u0000${key}`) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const { cap, key } of keys) {
        const k = `${cap}\u0000${key}`;
        const n = (this.open.get(k) ?? 1) - 1;
        if (n <= 0) this.open.delete(k);
        else this.open.set(k, n);
      }
    };
  }

  held(cap: StreamCap, key: string): number {
    return this.open.get(`${cap}\u0000${key}`) ?? 0;
  }
}
