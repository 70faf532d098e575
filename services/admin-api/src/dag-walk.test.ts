/**
 * #24 the dag views walk down from their root (dag-scope.ts `visibleReachableFrom`) instead of
 * reading every edge: the walk must give exactly what `reachableFrom` gives over every edge the
 * caller sees, nodes and edges in the same order, and never step through another team's task.
 */
import { reachableFrom } from '@ax/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from './auth.js';
import { visibleEdges, visibleReachableFrom } from './dag-scope.js';
import { startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
const everyTeam: Principal = { tokenId: '1', name: 'all', role: 'viewer', teams: '*' };
const payOnly: Principal = { tokenId: '2', name: 'pay', role: 'viewer', teams: ['pay'] };

// w_a → w_b → w_d, w_a → w_c → w_d (a diamond), w_d → w_e, w_b → w_x (ord) → w_y (pay),
// w_c → w_f, and w_z → w_a (upstream of the root: not reached).
const EDGES: ReadonlyArray<readonly [string, string]> = [
  ['w_a', 'w_b'], ['w_a', 'w_c'], ['w_b', 'w_d'], ['w_c', 'w_d'], ['w_d', 'w_e'],
  ['w_b', 'w_x'], ['w_x', 'w_y'], ['w_c', 'w_f'], ['w_z', 'w_a'],
];

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['pay', 'ord']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  for (const name of ['w_a', 'w_b', 'w_c', 'w_d', 'w_e', 'w_f', 'w_x', 'w_y', 'w_z']) {
    const team = name === 'w_x' ? 'ord' : 'pay';
    expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(name, { team }) })).status).toBe(201);
  }
  for (const [parent, child] of EDGES) {
    expect((await t.call('POST', '/api/v1/edges', { body: { parent, child, rule: 'ALL_SUCCESS' } })).status).toBe(201);
  }
});

afterAll(async () => {
  await t?.close();
});

describe('#24 the dag walk from a root', () => {
  for (const [who, principal] of [['every team', everyTeam], ['team pay', payOnly]] as const) {
    for (const root of ['w_a', 'w_b', 'w_c', 'w_e', 'w_z']) {
      it(`from ${root} for ${who}: the same nodes and edges, in the same order, as from every edge`, async () => {
        const expected = reachableFrom(root, await visibleEdges(t.pool, principal));
        expect(await visibleReachableFrom(t.pool, principal, root)).toEqual(expected);
      });
    }
  }

  it('does not pass through a task of a team the caller does not see', async () => {
    const all = await visibleReachableFrom(t.pool, everyTeam, 'w_a');
    expect(all.nodes).toEqual(expect.arrayContaining(['w_x', 'w_y']));
    const pay = await visibleReachableFrom(t.pool, payOnly, 'w_a');
    expect(pay.nodes).toEqual(['w_a', 'w_b', 'w_c', 'w_d', 'w_f', 'w_e']);
    expect(pay.edges.some((e) => e.parent === 'w_x' || e.child === 'w_x')).toBe(false);
  });

  it('#46 walks in one statement, and ends on a cycle stored before cycles were refused', async () => {
    // w_e → w_z closes w_z → w_a → … → w_e: refused on write today, possible in an old database.
    await t.pool.query(`INSERT INTO task_edge (parent_task, child_task, rule) VALUES ('w_e', 'w_z', 'ALL_SUCCESS')`);
    try {
      for (const principal of [everyTeam, payOnly]) {
        const expected = reachableFrom('w_a', await visibleEdges(t.pool, principal));
        expect(expected.nodes).toContain('w_z');
        expect(await visibleReachableFrom(t.pool, principal, 'w_a')).toEqual(expected);
      }
    } finally {
      await t.pool.query(`DELETE FROM task_edge WHERE parent_task = 'w_e' AND child_task = 'w_z'`);
    }
  });
});
