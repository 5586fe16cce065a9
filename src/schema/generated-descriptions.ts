import { type GraphQLSchema, isObjectType } from 'graphql';

/**
 * @pothos/plugin-errors generates a `<Parent><Field>Success { data }` type per field and offers no
 * default description for `data`; this names the field it belongs to, so every field of the
 * published schema is described.
 * @returns the same schema, described in place.
 */
export function describeResultData(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || !type.name.endsWith('Success')) continue;
    const data = type.getFields().data;
    if (data && !data.description) data.description = 'The value the field returned.';
  }
  return schema;
}
