import { builder } from './builder.ts';

/** Free-form JSON (card metadata, spec "Card": `data.meta`). Input must be a JSON object. */
builder.scalarType('JSON', {
  description: 'Any JSON value; as input, card metadata must be an object.',
  serialize: (value) => value,
  parseValue: (value) => value,
});
