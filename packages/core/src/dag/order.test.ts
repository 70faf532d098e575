import { describe, expect, it } from 'vitest';
import { CycleError } from '../errors.js';
import { downstreamOf, reachableFrom, topologicalOrder } from './order.js';

const e = (parent: string, child: string): { parent: string; child: string } => ({ parent, child });

function assertParentsFirst(order: string[], edges: Array<{ parent: string; child: string }>): void {
  for (const edge of edges) expect(order.indexOf(edge.parent)).toBeLessThan(order.indexOf(edge.child));
}

describe('topologicalOrder', () => {
  it('puts parents before children; among ready tasks the earliest in the input goes first', () => {
    const edges = [e('extract', 'transform'), e('transform', 'load'), e('extract', 'audit')];
    const order = topologicalOrder(['load', 'audit', 'transform', 'extract', 'lonely'], edges);
    expect(order).toEqual(['extract', 'audit', 'transform', 'load', 'lonely']);
    assertParentsFirst(order, edges);
  });

  it('includes nodes named only by edges', () => {
    expect(topologicalOrder([], [e('a', 'b')])).toEqual(['a', 'b']);
  });

  it('orders a diamond', () => {
    const edges = [e('a', 'b'), e('a', 'c'), e('b', 'd'), e('c', 'd')];
    const order = topologicalOrder(['d', 'c', 'b', 'a'], edges);
    expect(order).toEqual(['a', 'c', 'b', 'd']);
  });

  it('throws a CycleError naming the cycle', () => {
    try {
      topologicalOrder(['a'], [e('a', 'b'), e('b', 'c'), e('c', 'a'), e('c', 'd')]);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CycleError);
      const cycle = (error as CycleError).cycle;
      expect(cycle[0]).toBe(cycle.at(-1));
      expect([...cycle].slice(0, -1).sort()).toEqual(['a', 'b', 'c']);
    }
    expect(() => topologicalOrder([], [e('s', 's')])).toThrow('dependency cycle: s → s');
  });
});

describe('downstreamOf', () => {
  const edges = [e('root', 'a'), e('root', 'b'), e('a', 'c'), e('b', 'c'), e('c', 'd'), e('x', 'c'), e('x', 'y')];

  it('lists every descendant once, parents first, without the root or unrelated tasks', () => {
    const down = downstreamOf('root', edges);
    expect([...down].sort()).toEqual(['a', 'b', 'c', 'd']);
    assertParentsFirst(['root', ...down], edges.filter((edge) => edge.parent !== 'x'));
  });

  it('is empty for a leaf or an unknown task', () => {
    expect(downstreamOf('d', edges)).toEqual([]);
    expect(downstreamOf('nope', edges)).toEqual([]);
  });
});

describe('reachableFrom', () => {
  it('returns the nodes and edges reachable from the root', () => {
    const edges = [e('r', 'a'), e('a', 'b'), e('z', 'a'), e('z', 'q')];
    expect(reachableFrom('r', edges)).toEqual({ nodes: ['r', 'a', 'b'], edges: [e('r', 'a'), e('a', 'b')] });
  });
});
