/**
 * #47 "each instance records the version it ran": the dispatch writes the version of the
 * definition it sends, so an instance created at version 1 and dispatched after an edit to
 * version 2 (a manual run waiting in the backlog) names version 2, the one its worker got.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replaceTask } from '@ax/store';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
});

afterAll(async () => {
  await h?.close();
});

describe('#47 the task version of a dispatch', () => {
  it('an instance created at version 1 and dispatched at version 2 records 2', async () => {
    const v1 = await h.task('tv_dispatch', { tags: ['tv'], block: 'parallel', exec: { type: 'shell', command: ['echo', 'one'] } });
    const id = await h.instance(v1, { quiet: true });
    await h.db.pool.query('UPDATE task_instance SET task_version = ? WHERE id = ?', [v1.version, id]); // as created at version 1
    const v2 = await replaceTask(h.db.pool, { ...v1.definition, exec: { type: 'shell', command: ['echo', 'two'], shell: false } }, v1.version);
    expect(v2.version).toBe(2);
    const peer = await h.peer('w-tv', ['tv'], 1);
    const [item] = await peer.waitDispatches(1);
    expect(item?.exec).toMatchObject({ command: ['echo', 'two'] });
    expect(Number((await h.row(id))['task_version'])).toBe(2);
  });
});
