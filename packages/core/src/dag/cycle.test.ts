import { describe, expect, it } from 'vitest';
import { findCycle } from './cycle.js';

const e = (parent: string, child: string): { parent: string; child: string } => ({ parent, child });

describe('findCycle', () => {
  it('returns null when the new edge keeps the graph acyclic', () => {
    expect(findCycle([], e('a', 'b'))).toBeNull();
    expect(findCycle([e('a', 'b'), e('b', 'c')], e('a', 'c'))).toBeNull();
    expect(findCycle([e('a', 'b'), e('a', 'c')], e('b', 'c'))).toBeNull(); // diamond-ish, fine
    expect(findCycle([e('a', 'b')], e('a', 'b'))).toBeNull(); // duplicate edge is not a cycle
  });

  it('names the cycle in order, starting and ending with the same task', () => {
    expect(findCycle([e('a', 'b'), e('b', 'c')], e('c', 'a'))).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle([e('a', 'b')], e('b', 'a'))).toEqual(['a', 'b', 'a']);
  });

  it('catches self-edges', () => {
    expect(findCycle([], e('a', 'a'))).toEqual(['a', 'a']);
  });

  it('returns the shortest cycle when several would close', () => {
    const edges = [e('x', 'p1'), e('p1', 'p2'), e('p2', 'p3'), e('p3', 'y'), e('x', 'y')];
    expect(findCycle(edges, e('y', 'x'))).toEqual(['x', 'y', 'x']);
  });

  it('finds cycles through unrelated branches and long chains', () => {
    const chain = Array.from({ length: 500 }, (_, i) => e(`n${i}`, `n${i + 1}`));
    const cycle = findCycle([...chain, e('n0', 'side'), e('side', 'other')], e('n500', 'n0'));
    expect(cycle?.[0]).toBe('n0');
    expect(cycle?.at(-1)).toBe('n0');
    expect(cycle).toHaveLength(502);
  });
});
