/**
 * The web console (`@ax/console`, a static Vite build) served at `/`: its files, and
 * `index.html` for any other GET of a non-API path so the console's client-side routes
 * (`/tasks/x`, `/instances/42`) survive a reload. API paths keep their JSON 404s.
 *
 * The build is found through the package (`@ax/console/package.json` → `dist/`), so the
 * `pnpm deploy` folder of admin-api, which copies `@ax/console`'s `dist/` into its
 * node_modules, serves it as the workspace does. Without a build the API still works and the
 * console paths answer 503 saying so.
 *
 * Each compressible file goes out as the `.br` or `.gz` twin the build wrote beside it
 * (packages/console/precompress.ts) when the request's Accept-Encoding prefers one, else as it
 * is; hashed assets are cached for a year, everything else revalidated (`no-cache`).
 */
import type { Express, NextFunction, Request, Response } from 'express';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { COMPRESSIBLE_FILE, PRECOMPRESSED, chooseEncoding, type Precompressed } from '@ax/core';

/**
 * The console's own Content-Security-Policy: everything from this origin, nothing inline
 * but styles set by script (uPlot, React `style` props are CSSOM and need no `'unsafe-inline'`),
 * `data:` images for Pico's inline SVG icons.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The text of the 503 when the console was not built. */
export const CONSOLE_NOT_BUILT =
  'The ax console was not built: run `pnpm build` (or `pnpm --filter @ax/console build`) and restart admin-api. The API under /api/v1 works without it.\n';

/** The `dist/` folder of the installed `@ax/console` package, or null when the package is not installed. */
export function locateConsoleDist(): string | null {
  try {
    const manifest = createRequire(import.meta.url).resolve('@ax/console/package.json');
    return join(dirname(manifest), 'dist');
  } catch (_notInstalled) {
    return null;
  }
}

/** Whether `distDir` holds a console build. */
export function consoleBuilt(distDir: string | null): boolean {
  return distDir !== null && existsSync(join(distDir, 'index.html'));
}

/** Paths that belong to the API or the service itself: never answered with the console. */
function isServicePath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/') || path === '/healthz' || path === '/readyz' || path === '/metrics';
}

/** Vite names every file under assets/ by its content hash: cached for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html and the other unhashed files: asked again each time (an ETag makes that a 304), so a new build is loaded at once. */
const REVALIDATE = 'no-cache';

/**
 * The build's file at URL path `path`, or null: no such regular file, a dot segment, a
 * precompressed variant asked for by name, or anything resolving outside `distDir`.
 */
export function consoleFileOf(distDir: string, path: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch (_malformed) {
    return null;
  }
  if (decoded.includes('\0') || decoded.split('/').some((segment) => segment.startsWith('.'))) return null;
  if (PRECOMPRESSED.some(({ suffix }) => decoded.endsWith(suffix))) return null;
  const root = resolve(distDir);
  const file = resolve(root, `.${decoded}`);
  if (!file.startsWith(`${root}${sep}`)) return null;
  try {
    return statSync(file).isFile() ? file : null;
  } catch (_missing) {
    return null;
  }
}

/** The precompressed variants the build wrote beside `file`. */
function variantsOf(file: string): Precompressed[] {
  if (!COMPRESSIBLE_FILE.test(file)) return [];
  return PRECOMPRESSED.filter(({ suffix }) => existsSync(`${file}${suffix}`)).map(({ encoding }) => encoding);
}

/**
 * Sends `file`, or its `.br` / `.gz` twin when the request's Accept-Encoding prefers one
 * (core's `chooseEncoding`), with the console's CSP, `cacheControl`, and `Vary: Accept-Encoding`
 * on every compressible file so a shared cache keeps the variants apart.
 */
function sendConsoleFile(req: Request, res: Response, next: NextFunction, file: string, cacheControl: string): void {
  const variants = variantsOf(file);
  const encoding = chooseEncoding(req.get('accept-encoding'), variants);
  res.setHeader('content-security-policy', CONSOLE_CSP);
  res.setHeader('cache-control', cacheControl);
  if (COMPRESSIBLE_FILE.test(file)) res.vary('Accept-Encoding');
  // The type of the file itself, not of its .br / .gz twin (send keeps a type already set).
  res.type(extname(file));
  let sent = file;
  if (encoding !== 'identity') {
    res.setHeader('content-encoding', encoding);
    sent = `${file}${PRECOMPRESSED.find((p) => p.encoding === encoding)?.suffix ?? ''}`;
  }
  res.sendFile(sent, { cacheControl: false, dotfiles: 'allow' }, (err?: Error) => {
    if (err !== undefined && !res.headersSent) next(err);
  });
}

/**
 * Mounts the console after the API routes. `distDir` null or without `index.html` = not built:
 * console paths answer 503 text.
 */
export function mountConsole(app: Express, distDir: string | null): void {
  const index = distDir === null ? null : join(distDir, 'index.html');

  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isServicePath(req.path)) {
      next();
      return;
    }
    const file = distDir === null ? null : consoleFileOf(distDir, req.path);
    if (file !== null) {
      sendConsoleFile(req, res, next, file, req.path.startsWith('/assets/') ? IMMUTABLE : REVALIDATE);
      return;
    }
    // A missing hashed asset is a stale page, not a client route: a plain 404, never index.html.
    if (req.path.startsWith('/assets/')) {
      res.status(404).type('text/plain').send('Not found\n');
      return;
    }
    // Checked per request: a build made while the process runs is picked up without a restart.
    if (index === null || !consoleBuilt(distDir)) {
      res.status(503).type('text/plain').send(CONSOLE_NOT_BUILT);
      return;
    }
    sendConsoleFile(req, res, next, index, REVALIDATE);
  });
}
