import type { BuilderTypes } from './builder.ts';

/**
 * Nullable `String` fields that read the parent's member of the same name as is (`undefined` answers
 * null): one entry a field, name → description. For the plain optional text members of upstream
 * records (addresses, merchant names, issuer names), which otherwise each take an `exposeString` call.
 *
 * @param descriptions field name (a member of `Parent` holding a string, null or undefined) → its
 *   GraphQL description.
 */
export function nullableStrings<Parent extends { [K in Name]?: string | null }, const Name extends string>(
  t: PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, Parent>,
  descriptions: Record<Name, string>,
) {
  const field = (name: Name, description: string) =>
    t.string({ nullable: true, description, resolve: (parent) => parent[name] ?? null });
  return Object.fromEntries(
    (Object.entries(descriptions) as [Name, string][]).map(([name, description]) => [
      name,
      field(name, description),
    ]),
  ) as Record<Name, ReturnType<typeof field>>;
}

/**
 * Optional `String` input fields, one entry a field, name → description; the mirror of
 * {@link nullableStrings} for input objects (a client may omit each or send null). Lengths and
 * patterns are checked by the input object's own validation, not here.
 *
 * @param descriptions field name → its GraphQL description.
 */
export function optionalStrings<const Name extends string>(
  t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, 'InputObject'>,
  descriptions: Record<Name, string>,
) {
  const field = (description: string) => t.string({ required: false, description });
  return Object.fromEntries(
    (Object.entries(descriptions) as [Name, string][]).map(([name, description]) => [
      name,
      field(description),
    ]),
  ) as Record<Name, ReturnType<typeof field>>;
}
