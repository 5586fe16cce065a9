import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printGatewaySchema } from '../../src/schema/print.ts';

describe('schema.graphql', () => {
  it('is the SDL printed from the Pothos schema (run `npm run schema` after changing src/schema)', () => {
    const committed = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printGatewaySchema());
  });
});
