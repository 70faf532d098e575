/**
 * generated.ts is the output of scripts/gen-api-types.mjs for the current routes: a route or
 * schema change of admin-api without `pnpm gen:api-types` fails here (the document is built from
 * admin-api's dist/, so this runs after `pnpm build`, as the test suite does).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface Generator {
  generateApiTypes(document?: unknown): Promise<string>;
  toTs(schema: unknown): string;
  GENERATED_PATH: string;
}

// A plain-JavaScript script (no declarations): loaded by URL and typed here.
const generatorUrl = new URL('../../../scripts/gen-api-types.mjs', import.meta.url).href;
const load = async (): Promise<Generator> => (await import(generatorUrl)) as Generator;

describe('@ax/api-types', () => {
  it('generated.ts is up to date with the OpenAPI document', async () => {
    const { generateApiTypes, GENERATED_PATH } = await load();
    const expected = await generateApiTypes();
    const actual = readFileSync(GENERATED_PATH, 'utf8');
    if (actual !== expected) {
      const a = actual.split('\n');
      const e = expected.split('\n');
      const line = e.findIndex((text, i) => text !== a[i]);
      expect.fail(
        `packages/api-types/src/generated.ts is stale (first difference at line ${line + 1}: ` +
          `${JSON.stringify(a[line])} should be ${JSON.stringify(e[line])}): run pnpm build && pnpm gen:api-types`,
      );
    }
  }, 60_000);

  it('converts the JSON Schema forms the document uses', async () => {
    const { toTs } = await load();
    expect(toTs({ type: ['string', 'null'] })).toBe('string | null');
    expect(toTs({ anyOf: [{ type: 'integer' }, { type: 'null' }] })).toBe('number | null');
    expect(toTs({ type: 'string', enum: ['a', 'b'] })).toBe('"a" | "b"');
    expect(toTs({ type: 'string', const: 'x' })).toBe('"x"');
    expect(toTs({ type: 'array', items: { type: 'string' } })).toBe('string[]');
    expect(toTs({ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } })).toBe('Array<string | number>');
    expect(toTs({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} })).toBe('{ [key: string]: unknown }');
    expect(toTs({ type: 'object', additionalProperties: { type: 'number' } })).toBe('{ [key: string]: number }');
    expect(toTs({ $ref: '#/components/schemas/Error' })).toBe('Schemas["Error"]');
    expect(toTs({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'boolean' } }, required: ['a'], additionalProperties: false })).toBe(
      '{\n  a: string;\n  b?: boolean;\n}',
    );
    expect(toTs({})).toBe('unknown');
  });
});
