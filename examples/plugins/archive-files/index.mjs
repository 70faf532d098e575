// Example ax worker plugin: moves files older than N days from one directory into a dated
// archive directory. Copy this directory into AX_PLUGIN_DIR and reference it from a task:
//   {"type":"plugin","name":"archive_files",
//    "config":{"source":"/data/exports","target":"/data/archive/{{bizDate}}","olderThanDays":7}}
import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';

export function describe() {
  return { name: 'archive_files', version: '1.0.0', description: 'move old files into a dated archive directory' };
}

export function init() {
  // Once per run process: open clients here if the plugin needs any.
}

export function prepare(ctx) {
  const { source, target, olderThanDays = 0 } = ctx.config;
  if (typeof source !== 'string' || typeof target !== 'string') throw new Error('config.source and config.target must be paths');
  if (typeof olderThanDays !== 'number' || olderThanDays < 0) throw new Error('config.olderThanDays must be a number ≥ 0');
}

export async function run(ctx) {
  const { source, target, olderThanDays = 0 } = ctx.config;
  const cutoff = Date.now() - olderThanDays * 86_400_000;
  await mkdir(target, { recursive: true });
  let moved = 0;
  for (const name of await readdir(source)) {
    if (ctx.signal.aborted) return { success: false, message: `stopped after ${moved} files` };
    const from = path.join(source, name);
    const info = await stat(from);
    if (!info.isFile() || info.mtimeMs > cutoff) continue;
    await rename(from, path.join(target, name));
    moved += 1;
  }
  ctx.log(`archived ${moved} file(s) from ${source} to ${target}`);
  return { success: true, message: `archived ${moved} file(s)`, data: { moved } };
}
