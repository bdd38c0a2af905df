import { Agent, request } from 'undici';
import { createScheme } from '../../src/signing/index.js';
import type { PlannedSend } from './plan.js';

export interface LoadResult {
  /** `source \0 event id` of every event that got a 2xx at least once. */
  acked: Set<string>;
  /** Answers by HTTP status, plus `network` for refused or cut connections. */
  answers: Map<string, number>;
  requests: number;
  /** Copies that never got a 2xx before their deadline (a provider would keep trying; reported). */
  gaveUp: number;
}

export const eventKey = (source: string, eventId: string) => `${source}\u0000${eventId}`;

/**
 * Sends the plan as a provider would: signed anew on each try, retried with backoff on 5xx and on
 * refused or cut connections (a killed receiver, a restarting database) until a 2xx or the deadline.
 */
export async function driveLoad(
  url: string,
  sends: readonly PlannedSend[],
  options: { secret: string; concurrency: number; copyDeadlineMs: number; onProgress?: (done: number) => void },
): Promise<LoadResult> {
  const scheme = createScheme('paymos');
  const agent = new Agent({ connections: options.concurrency * 2, headersTimeout: 15_000, bodyTimeout: 15_000, connect: { timeout: 5_000 } });
  const result: LoadResult = { acked: new Set(), answers: new Map(), requests: 0, gaveUp: 0 };
  const count = (answer: string) => result.answers.set(answer, (result.answers.get(answer) ?? 0) + 1);

  const sendCopy = async (send: PlannedSend) => {
    const deadline = Date.now() + options.copyDeadlineMs;
    for (let attempt = 0; ; attempt++) {
      result.requests++;
      try {
        const res = await request(`${url}/in/${send.source}`, {
          method: 'POST',
          body: send.body,
          headers: { 'content-type': 'application/json', ...scheme.sign({ body: send.body, secrets: [options.secret] }) },
          dispatcher: agent,
        });
        await res.body.dump();
        count(String(res.statusCode));
        if (res.statusCode >= 200 && res.statusCode < 300) {
          result.acked.add(eventKey(send.source, send.eventId));
          return;
        }
        if (res.statusCode < 500) return; // refused for good: never expected here, counted and checked
      } catch {
        count('network');
      }
      if (Date.now() > deadline) {
        result.gaveUp++;
        return;
      }
      const backoff = Math.min(2_000, 50 * 2 ** attempt);
      await new Promise((r) => setTimeout(r, backoff / 2 + Math.random() * (backoff / 2)));
    }
  };

  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < sends.length) {
      const send = sends[next++]!;
      await Promise.all(Array.from({ length: send.together }, () => sendCopy(send)));
      options.onProgress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  await agent.close();
  return result;
}
