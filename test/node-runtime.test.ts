// Which Node ax supports, said in one place each: `engines` of every package a user installs or
// deploys, `.node-version` (the maintained LTS the images run and CI tests on as well), and a CI
// script that exports nothing a README user would not have.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@ax/testing';
import { describe, expect, it } from 'vitest';

const root = repoRoot();
const read = (file: string): string => readFileSync(join(root, file), 'utf8');
const manifest = (file: string): { name?: string; engines?: { node?: string } } =>
  JSON.parse(read(file)) as { name?: string; engines?: { node?: string } };

// Node packages only: packages/sdk-python is a Python package, without a package.json.
const workspaceManifests = ['packages', 'services']
  .flatMap((dir) => readdirSync(join(root, dir)).map((name) => `${dir}/${name}/package.json`))
  .filter((file) => existsSync(join(root, file)))
  .concat('examples/business-service/package.json');

/** The major versions a `^a.b.c || ^d.e.f` range admits. */
function majors(range: string): number[] {
  return range.split('||').map((part) => Number(/\^(\d+)\./.exec(part.trim())?.[1]));
}

describe('the supported Node versions', () => {
  const rootRange = manifest('package.json').engines?.node ?? '';

  it('the root engines name the maintained LTS lines and the Node 20 the machines still have', () => {
    expect(majors(rootRange)).toEqual([20, 22, 24]);
  });

  it('.node-version is an exact release of a supported LTS line', () => {
    const lts = read('.node-version').trim();
    expect(lts).toMatch(/^\d+\.\d+\.\d+$/);
    expect([22, 24]).toContain(Number(lts.split('.')[0]));
    expect(majors(rootRange)).toContain(Number(lts.split('.')[0]));
  });

  it('every package that declares engines says the same as the root', () => {
    const declared = workspaceManifests.map((file) => ({ file, range: manifest(file).engines?.node })).filter((m) => m.range !== undefined);
    expect(declared.map((m) => m.file)).toEqual(expect.arrayContaining(['services/worker/package.json', 'packages/sdk/package.json']));
    for (const { file, range } of declared) expect(range, file).toBe(rootRange);
  });

  it('.ci/run exports no npm_config_* setting and tests on the .node-version runtime too', () => {
    const ci = read('.ci/run');
    expect(ci).not.toMatch(/^\s*export\s+npm_config_/im);
    expect(ci).toContain('.node-version');
  });
});
