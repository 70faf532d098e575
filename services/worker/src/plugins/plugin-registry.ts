/**
 * Plugins found in `AX_PLUGIN_DIR` at start-up. Each is imported once to check its shape and
 * read its `describe()`; a plugin that fails to load is reported by name and skipped — the
 * worker still starts, and tasks naming it fail with a clear error.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '@ax/kit';
import type { PluginDescription, PluginModule } from './plugin-api.js';

/** A usable plugin. */
export interface LoadedPlugin {
  readonly name: string;
  /** The module file the runner imports. */
  readonly file: string;
  readonly description: PluginDescription;
}

/** A plugin that could not be loaded. */
export interface BrokenPlugin {
  readonly name: string;
  readonly file: string;
  readonly error: string;
}

/** The outcome of loading a plugin directory. */
export interface PluginSet {
  readonly plugins: ReadonlyMap<string, LoadedPlugin>;
  readonly broken: readonly BrokenPlugin[];
}

const PLUGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

function moduleFileOf(dir: string, entry: string): string | null {
  const full = path.join(dir, entry);
  const stat = statSync(full);
  if (stat.isFile()) return /\.(m?js)$/.test(entry) ? full : null;
  if (!stat.isDirectory()) return null;
  for (const index of ['index.js', 'index.mjs']) if (existsSync(path.join(full, index))) return path.join(full, index);
  return null;
}

/** Loads every plugin of `dir` (a missing directory = no plugins). Never throws for a plugin's fault. */
export async function loadPlugins(dir: string, logger: Logger): Promise<PluginSet> {
  const plugins = new Map<string, LoadedPlugin>();
  const broken: BrokenPlugin[] = [];
  if (!existsSync(dir)) {
    logger.info({ pluginDir: dir }, 'no plugin directory; plugin tasks will fail');
    return { plugins, broken };
  }
  for (const entry of readdirSync(dir).sort()) {
    let file: string | null;
    try {
      file = moduleFileOf(dir, entry);
    } catch {
      continue; // vanished while listing
    }
    if (file === null) continue;
    const fallbackName = entry.replace(/\.(m?js)$/, '');
    try {
      const mod = (await import(pathToFileURL(file).href)) as Partial<PluginModule>;
      if (typeof mod.run !== 'function') throw new Error('it exports no run function');
      for (const hook of ['describe', 'init', 'prepare'] as const) {
        if (mod[hook] !== undefined && typeof mod[hook] !== 'function') throw new Error(`its export ${hook} is not a function`);
      }
      const description = mod.describe?.() ?? {};
      const name = typeof description.name === 'string' ? description.name : fallbackName;
      if (!PLUGIN_NAME.test(name)) throw new Error(`its name ${JSON.stringify(name)} is not a valid plugin name`);
      if (plugins.has(name)) throw new Error(`another plugin is already named ${name} (${plugins.get(name)?.file ?? ''})`);
      plugins.set(name, { name, file, description });
      logger.info({ plugin: name, file, version: description.version }, 'plugin loaded');
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      broken.push({ name: fallbackName, file, error: message });
      logger.error({ plugin: fallbackName, file, err: message }, `plugin ${fallbackName} could not be loaded and is skipped`);
    }
  }
  return { plugins, broken };
}
