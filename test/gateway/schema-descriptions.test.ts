import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isUnionType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.ts';

describe('schema descriptions', () => {
  it('describes every type, field, argument, input field and enum value', () => {
    const missing: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || ['String', 'Int', 'Float', 'Boolean', 'ID'].includes(type.name))
        continue;
      if (!type.description) missing.push(type.name);
      if (isObjectType(type) || isInterfaceType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (!field.description) missing.push(`${type.name}.${field.name}`);
          for (const arg of field.args)
            if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
      if (isInputObjectType(type)) {
        for (const field of Object.values(type.getFields()))
          if (!field.description) missing.push(`${type.name}.${field.name}`);
      }
      if (isEnumType(type)) {
        for (const value of type.getValues())
          if (!value.description) missing.push(`${type.name}.${value.name}`);
      }
      if (isUnionType(type) && !type.description) missing.push(type.name);
    }
    expect(missing).toEqual([]);
  });
});
