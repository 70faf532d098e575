/**
 * The web console (`@ax/console`, a static Vite build) served at `/`: its files, and
 * `index.html` for any other GET of a non-API path so the console's client-side routes
 * (`/tasks/x`, `/instances/42`) survive a reload. API paths keep their JSON 404s.
 *
 * The build is found through the package (`@ax/console/package.json` → `dist/`), so the
 * `pnpm deploy` folder of admin-api, which copies `@ax/console`'s `dist/` into its
 * node_modules, serves it as the workspace does. Without a build the API still works and the
 * console paths answer 503 saying so.
 */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

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

/**
 * Mounts the console after the API routes. `distDir` null or without `index.html` = not built:
 * console paths answer 503 text.
 */
export function mountConsole(app: Express, distDir: string | null): void {
  const index = distDir === null ? null : join(distDir, 'index.html');

  const consoleHeaders = (res: Response): void => {
    res.setHeader('content-security-policy', CONSOLE_CSP);
  };

  if (distDir !== null) {
    // Vite names every file under assets/ by its content hash: cache them for good.
    app.use(
      '/assets',
      express.static(join(distDir, 'assets'), {
        index: false,
        fallthrough: true,
        setHeaders: (res) => {
          consoleHeaders(res);
          res.setHeader('cache-control', 'public, max-age=31536000, immutable');
        },
      }),
    );
    app.use(
      express.static(distDir, {
        index: false,
        redirect: false,
        setHeaders: (res) => consoleHeaders(res),
      }),
    );
  }

  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isServicePath(req.path)) {
      next();
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
    consoleHeaders(res);
    // cacheControl off: the app-wide `no-store` stays, so a new build is loaded at once.
    res.sendFile(index, { cacheControl: false, lastModified: false }, (err?: Error) => {
      if (err !== undefined) next(err);
    });
  });
}
