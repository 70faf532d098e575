// deploy/Dockerfile, checked without a Docker engine: one target per image, each built from the
// frozen lockfile and its `pnpm deploy` folder, non-root, health-checked, pinned base images.
// The `dockerfile-utils` devDependency's validator (the Dockerfile language server's
// diagnostics) runs too; without the package that one check is skipped, saying so, and under
// CI=true (where `pnpm install` always installs it) it fails.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { missingRequirement } from '@ax/testing';
import {
  effective,
  effectiveEnv,
  IMAGE_TARGETS,
  knownAxVariables,
  parseDockerfile,
  readRepoFile,
  repo,
  SERVICES,
  stageChain,
} from './support.js';

const text = readRepoFile('deploy/Dockerfile');
const file = parseDockerfile(text);
const args = new Map(
  [...file.preamble, ...file.stages.flatMap((s) => s.instructions)]
    .filter((ins) => ins.keyword === 'ARG')
    .map((ins) => /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(ins.args.trim()))
    .filter((m): m is RegExpExecArray => m !== null && m[2] !== undefined)
    .map((m) => [m[1] ?? '', m[2] ?? ''] as const),
);

/** A FROM base with its `${ARG}` references replaced by the ARG defaults. */
function resolveBase(base: string): string {
  return base.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_all, name: string) => args.get(name) ?? `<unset ${name}>`);
}

/** The exec-form JSON array of an instruction (ENTRYPOINT/CMD/HEALTHCHECK CMD). */
function execForm(argsText: string): string[] {
  const json = argsText.slice(argsText.indexOf('['));
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) throw new Error(`not an exec form: ${argsText}`);
  return parsed;
}

describe('deploy/Dockerfile', () => {
  it('has one target per image, each a distinct named stage', () => {
    const names = file.stages.map((s) => s.name);
    for (const target of IMAGE_TARGETS) expect(names, `target ${target}`).toContain(target);
    expect(new Set(names).size).toBe(names.length);
  });

  it('pins every base image to a slim tag of the maintained LTS in .node-version, never `latest` or untagged', () => {
    // Node 20 reached its end of life on 2026-04-30: production runs on 22 or 24.
    const lts = readRepoFile('.node-version').trim();
    expect(lts).toMatch(/^(22|24)\.\d+\.\d+$/);
    const external = file.stages.filter((s) => !file.stages.some((o) => o.name === s.base.toLowerCase()));
    expect(external.length).toBeGreaterThan(0);
    for (const stage of external) {
      const image = resolveBase(stage.base);
      expect(image, `FROM ${stage.base}`).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/);
      expect(image, `FROM ${stage.base}`).toContain(`node:${lts}-`);
      expect(image).not.toMatch(/:latest\b/);
    }
    expect(text).not.toMatch(/:latest\b/);
  });

  it('exports no npm_config_nodedir: the pnpmfile finds the Node headers of the image', () => {
    expect(text).not.toMatch(/npm_config_nodedir/i);
  });

  it('installs pnpm 12.4.2 (the CI version) and builds from the frozen lockfile', () => {
    expect(args.get('PNPM_VERSION')).toBe('12.4.2');
    expect(readRepoFile('.ci/run')).toContain('12.4.2');
    const runs = file.stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /npm install -g "?pnpm@\$\{PNPM_VERSION\}"?/.test(r))).toBe(true);
    const install = runs.filter((r) => /\bpnpm install\b/.test(r));
    expect(install.length).toBeGreaterThan(0);
    for (const r of install) expect(r).toContain('--frozen-lockfile');
    expect(runs.some((r) => /\bpnpm build\b/.test(r))).toBe(true);
  });

  it('copies each image from its own `pnpm --filter <pkg> deploy --prod` folder', () => {
    const runs = file.stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'RUN').map((i) => i.args).join('\n');
    const images = [
      ...SERVICES.map((s) => ({ target: s.name, pkg: s.pkg })),
      { target: 'migrate', pkg: '@ax/store' },
      { target: 'example-business-service', pkg: '@ax/example-business-service' },
    ];
    for (const { target, pkg } of images) {
      const out = new RegExp(`pnpm --filter ${pkg.replace('/', '\\/')} deploy --prod (\\S+)`).exec(runs);
      expect(out, `deploy of ${pkg}`).not.toBeNull();
      const copies = stageChain(file, target)[0]?.instructions.filter((i) => i.keyword === 'COPY') ?? [];
      expect(copies.some((c) => c.args.includes('--from=build') && c.args.includes(` ${out?.[1] ?? '?'} /app`)), `${target} copies ${out?.[1]}`).toBe(true);
    }
  });

  it.each(IMAGE_TARGETS)('%s runs as a non-root user', (target) => {
    const user = effective(file, target, 'USER');
    expect(user, `USER in ${target}`).toBeDefined();
    expect(user?.args.split(':')[0]).not.toMatch(/^(root|0)$/);
  });

  it.each(SERVICES.map((s) => s.name))('%s: node dist/main.js, a HEALTHCHECK on /healthz of its port, NODE_ENV=production', (target) => {
    const service = SERVICES.find((s) => s.name === target);
    expect(execForm(effective(file, target, 'ENTRYPOINT')?.args ?? '')).toEqual(['node', 'dist/main.js']);
    const health = effective(file, target, 'HEALTHCHECK');
    expect(health?.args).toMatch(/\bCMD\b/);
    const probe = execForm(health?.args ?? '');
    expect(probe.slice(0, 2)).toEqual(['node', '-e']);
    expect(probe[2]).toMatch(/fetch\(.*\/healthz/);
    expect(probe[2]).toContain('process.env.AX_HTTP_PORT');
    const env = effectiveEnv(file, target);
    expect(env.get('AX_HTTP_PORT')).toBe(String(service?.port));
    expect(env.get('NODE_ENV')).toBe('production');
    const exposed = stageChain(file, target)[0]?.instructions.find((i) => i.keyword === 'EXPOSE');
    expect(exposed?.args.trim()).toBe(String(service?.port));
  });

  it('gives the worker a writable data volume for its outbox (AX_WORKER_DATA_DIR)', () => {
    const env = effectiveEnv(file, 'worker');
    const dataDir = env.get('AX_WORKER_DATA_DIR');
    expect(dataDir).toBe('/data');
    const own = stageChain(file, 'worker')[0]?.instructions ?? [];
    expect(own.some((i) => i.keyword === 'VOLUME' && i.args.includes(`"${dataDir}"`))).toBe(true);
    // Created and handed to the runtime user before USER switches to it.
    const chown = own.findIndex((i) => i.keyword === 'RUN' && /mkdir -p [^&]*\/data/.test(i.args) && /chown ax:ax \/data/.test(i.args));
    const user = own.findIndex((i) => i.keyword === 'USER');
    expect(chown).toBeGreaterThanOrEqual(0);
    expect(chown).toBeLessThan(user);
  });

  it('#48 installs python3 (the Debian package) in the worker stage itself, as root, so `python` tasks find /usr/bin/python3', () => {
    // in the worker's own stage: the build stage's python3 (for node-gyp) never reaches an image
    const own = stageChain(file, 'worker')[0]?.instructions ?? [];
    const install = own.findIndex((i) => i.keyword === 'RUN' && /apt-get install\b[^&]*\bpython3\b/.test(i.args));
    expect(install, 'RUN apt-get install … python3 in the worker stage').toBeGreaterThanOrEqual(0);
    expect(own[install]?.args).toMatch(/apt-get update/);
    expect(own[install]?.args, 'no apt lists left in the layer').toMatch(/rm -rf \/var\/lib\/apt\/lists/);
    const user = own.findIndex((i) => i.keyword === 'USER');
    expect(install).toBeLessThan(user);
    // and not in the shared runtime stage: the other images stay without it
    for (const target of IMAGE_TARGETS.filter((t) => t !== 'worker')) {
      const installs = stageChain(file, target).flatMap((stage) => stage.instructions).filter((i) => i.keyword === 'RUN' && /\bpython3\b/.test(i.args));
      expect(installs, target).toEqual([]);
    }
  });

  it('keeps local installs, builds and secrets out of the build context (Dockerfile.dockerignore)', () => {
    const ignore = readRepoFile('deploy/Dockerfile.dockerignore').split('\n').map((l) => l.trim());
    for (const pattern of ['**/node_modules', '**/dist', '.git', 'deploy/.env']) expect(ignore, pattern).toContain(pattern);
  });

  it('has a migrate target running the store CLI (`pnpm migrate`), without a port to probe', () => {
    expect(execForm(effective(file, 'migrate', 'ENTRYPOINT')?.args ?? '')).toEqual(['node', 'dist/cli.js']);
    expect(execForm(effective(file, 'migrate', 'CMD')?.args ?? '')).toEqual(['migrate']);
    expect(effective(file, 'migrate', 'HEALTHCHECK')?.args.trim()).toBe('NONE');
    // The root script the image stands for.
    expect(readRepoFile('package.json')).toContain('"migrate": "node packages/store/dist/cli.js migrate"');
  });

  it('sets only variables the code reads', () => {
    const known = knownAxVariables();
    for (const target of IMAGE_TARGETS) {
      for (const name of effectiveEnv(file, target).keys()) {
        if (name.startsWith('AX_')) expect(known, `${target} sets ${name}`).toContain(name);
      }
    }
  });

  const validatorModule = loadDockerfileUtils();
  const noValidator = missingRequirement(it, {
    name: 'dockerfile-utils',
    present: validatorModule !== undefined,
    install: 'pnpm install (a devDependency of the root package.json)',
  });
  it.skipIf(noValidator)('passes the dockerfile-utils validator', () => {
    const diagnostics = validatorModule?.validate(text) ?? [];
    // Errors only (severity 1): warnings are style advice, not a broken build.
    const problems = diagnostics.filter((d) => d.severity === 1).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    expect(problems).toEqual([]);
  });
});

interface DockerfileUtils {
  validate(content: string): { message: string; severity?: number; range: { start: { line: number } } }[];
}

/** `dockerfile-utils` (rcjsuen's Dockerfile validator) when installed at the root, else undefined. */
function loadDockerfileUtils(): DockerfileUtils | undefined {
  try {
    return createRequire(`${repo}package.json`)('dockerfile-utils') as DockerfileUtils;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}
