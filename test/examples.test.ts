// The job files in examples/ are what users copy first: each must import cleanly.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTaskYaml } from '@ax/core';
import { describe, expect, it } from 'vitest';

const jobsDir = fileURLToPath(new URL('../examples/jobs/', import.meta.url));
const files = readdirSync(jobsDir).filter((f) => f.endsWith('.yaml'));

describe('examples/jobs', () => {
  it('has example job files', () => {
    expect(files.length).toBeGreaterThan(0);
  });
  it.each(files)('%s parses into valid task definitions', (file) => {
    const result = parseTaskYaml(readFileSync(join(jobsDir, file), 'utf8'), file);
    expect(result.ok ? [] : result.issues.map((i) => i.message)).toEqual([]);
  });
});
