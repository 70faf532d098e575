/**
 * #18 quotas, what the limit costs: with no team limited the claim transaction runs exactly the
 * statements it ran before teams had limits (no team row read, no count); with a limit on some
 * other team it reads one count (the claim hint) and locks nothing; only when it claims an
 * instance of a limited team does it lock that team's row and count after the lock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTeam, type StorePool } from '@ax/store';
import { dispatchOnce } from './dispatch.js';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
  await h.broker.stop(); // its own loop would race the calls below for the dispatch turn
});

afterAll(async () => {
  await h?.close();
});

/** The harness pool, recording every statement sent through it or its connections. */
function recordingPool(pool: StorePool): { pool: StorePool; statements: string[] } {
  const statements: string[] = [];
  const record = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        const value: unknown = Reflect.get(t, prop, t);
        if (typeof value !== 'function') return value;
        const fn = value as (...args: unknown[]) => unknown;
        if (prop === 'query' || prop === 'execute') {
          return (...args: unknown[]) => {
            statements.push(String(typeof args[0] === 'string' ? args[0] : (args[0] as { sql?: string }).sql).replace(/\s+/g, ' '));
            return fn.apply(t, args);
          };
        }
        if (prop === 'getConnection') return async (...args: unknown[]) => record((await fn.apply(t, args)) as object);
        return fn.bind(t);
      },
    });
  return { pool: record(pool), statements };
}

/** Statements reading team rows or counting by team (the task row read names the column too). */
const teamStatements = (statements: readonly string[]): string[] => statements.filter((s) => /FROM team\b|\bt\.team\b/.test(s));

describe('the cost of team limits at claim', () => {
  it('#18 quotas: no limited team = no extra statement; a limit elsewhere = one count, no lock; a claimed limited team = its row locked', async () => {
    await insertTeam(h.db.pool, { name: 'a', description: '', maxRunning: null });
    await insertTeam(h.db.pool, { name: 'z', description: '', maxRunning: null });
    const task = await h.task('cost_probe', { team: 'a' });
    await h.instance(task); // no worker: claimed every time and left PENDING (NO_WORKER)
    const { pool, statements } = recordingPool(h.db.pool);
    const ctx = { ...h.broker.context, pool };

    await ctx.teams.refresh(h.db.pool);
    await dispatchOnce(ctx); // writes the instance's one NO_WORKER event; the polls below only look for it
    statements.length = 0;
    expect(await dispatchOnce(ctx)).toMatchObject({ claimed: 1, waitingForWorker: 1, waitingForTeam: 0 });
    const plain = [...statements];
    expect(teamStatements(plain)).toEqual([]);

    await h.db.pool.query(`UPDATE team SET max_running = 5 WHERE name = 'z'`);
    await ctx.teams.refresh(h.db.pool);
    statements.length = 0;
    expect(await dispatchOnce(ctx)).toMatchObject({ claimed: 1, waitingForWorker: 1 });
    expect(statements.filter((st) => !teamStatements([st]).length)).toEqual(plain);
    expect(teamStatements(statements)).toHaveLength(1);
    expect(teamStatements(statements)[0]).toMatch(/COUNT\(\*\).*GROUP BY team/);
    expect(statements.some((s) => /FROM team .*FOR UPDATE/.test(s))).toBe(false);

    await h.db.pool.query(`UPDATE team SET max_running = 0 WHERE name = 'a'`);
    await ctx.teams.refresh(h.db.pool);
    statements.length = 0;
    // Team a is at its limit (0): left out of the claim (R23: not claimed for), so nothing is claimed at all.
    expect(await dispatchOnce(ctx)).toMatchObject({ claimed: 0 });
    expect(statements.some((s) => /\b[a-z]\.team NOT IN \(\?\)/.test(s))).toBe(true); // the claim's alias: h (perf45's derived table) or i

    await h.db.pool.query(`UPDATE team SET max_running = 1 WHERE name = 'a'`);
    await ctx.teams.refresh(h.db.pool);
    statements.length = 0;
    expect(await dispatchOnce(ctx)).toMatchObject({ claimed: 1 });
    expect(statements.some((s) => /SELECT name, max_running FROM team WHERE name IN \(\?\) ORDER BY name FOR UPDATE/.test(s))).toBe(true);
  });
});
