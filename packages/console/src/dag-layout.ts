/** Lays a DAG out with dagre (left to right) into what the SVG view draws: boxes and edge polylines. */
import dagre from '@dagrejs/dagre';
import type { Dag } from './types';

export interface LaidNode {
  name: string;
  /** Centre. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LaidEdge {
  parent: string;
  child: string;
  rule: string;
  points: Array<{ x: number; y: number }>;
}

export interface Layout {
  nodes: LaidNode[];
  edges: LaidEdge[];
  width: number;
  height: number;
}

const NODE_HEIGHT_PX = 40;
/** Monospace-ish estimate: the label is drawn at 13 px. */
const CHAR_WIDTH_PX = 8;

export function layoutDag(dag: Dag): Layout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 56, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const name of dag.nodes) g.setNode(name, { width: Math.max(96, name.length * CHAR_WIDTH_PX + 32), height: NODE_HEIGHT_PX });
  for (const e of dag.edges) g.setEdge(e.parent, e.child);
  dagre.layout(g);
  const nodes = dag.nodes.map((name): LaidNode => {
    const n = g.node(name) as { x: number; y: number; width: number; height: number };
    return { name, x: n.x, y: n.y, width: n.width, height: n.height };
  });
  const edges = dag.edges.map((e): LaidEdge => {
    const label = g.edge(e.parent, e.child) as { points?: Array<{ x: number; y: number }> } | undefined;
    return { ...e, points: label?.points ?? [] };
  });
  const graph = g.graph() as { width?: number; height?: number };
  return { nodes, edges, width: Math.ceil(graph.width ?? 0), height: Math.ceil(graph.height ?? 0) };
}
