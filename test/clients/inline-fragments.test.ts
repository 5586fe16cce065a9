import { readFileSync } from 'node:fs';
import { buildSchema, type DocumentNode, Kind, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadExampleOperations } from '../../src/client/example-operations.ts';
import { inlineFragments } from '../../src/client/inline-fragments.ts';

const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));

describe('inlineFragments (GraphiQL’s default document)', () => {
  it('writes each spread in place at its indentation, nested ones too, and drops the fragments with their comments', () => {
    const text = [
      '# header',
      'query A {',
      '  a {',
      '    ...F',
      '  }',
      '}',
      '',
      '# F is shared',
      'fragment F on T {',
      '  x',
      '  ...G',
      '}',
      '',
      'fragment G on U {',
      '  y',
      '}',
      '',
    ].join('\n');
    expect(inlineFragments(text)).toBe(
      [
        '# header',
        'query A {',
        '  a {',
        '    ... on T {',
        '      x',
        '      ... on U {',
        '        y',
        '      }',
        '    }',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('refuses a spread of no fragment, one with directives and a cycle', () => {
    expect(() => inlineFragments('{ a { ...F } }')).toThrow('...F names no fragment of the document');
    expect(() => inlineFragments('{ a { ...F @include(if: true) } } fragment F on T { x }')).toThrow(
      '...F carries directives; inline it by hand',
    );
    expect(() => inlineFragments('{ a { ...F } } fragment F on T { ...F }')).toThrow(
      'fragment F spreads itself',
    );
  });

  it('every shipped example operation is valid on its own, as GraphiQL sends it', () => {
    const document = parse(loadExampleOperations().document);
    expect(document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)).toEqual([]);
    expect(document.definitions).toHaveLength(loadExampleOperations().operationNames.length);
    for (const definition of document.definitions) {
      const alone: DocumentNode = { kind: Kind.DOCUMENT, definitions: [definition] };
      expect(validate(schema, alone), JSON.stringify(definition.loc?.startToken.line)).toEqual([]);
    }
    // The source does share its selections as fragments (else this test guards nothing).
    const source = readFileSync(new URL('../../src/client/operations.graphql', import.meta.url), 'utf8');
    expect(parse(source).definitions.some((d) => d.kind === Kind.FRAGMENT_DEFINITION)).toBe(true);
  });
});
