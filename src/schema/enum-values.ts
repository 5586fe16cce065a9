/**
 * GraphQL enum values of a contract enumeration, one description per wire value: the name is the
 * value upper-cased (`apple_pay` → `APPLE_PAY`), the value `prefix` + the wire value (e.g.
 * `au_card.` + `updated` for the account updater's event names).
 */
export function enumValuesOf<const V extends string, const P extends string = ''>(
  descriptions: Record<V, string>,
  prefix: P = '' as P,
) {
  return Object.fromEntries(
    Object.entries<string>(descriptions).map(([value, description]) => [
      value.toUpperCase(),
      { value: `${prefix}${value}`, description },
    ]),
  ) as { [K in V as Uppercase<K>]: { value: `${P}${K}`; description: string } };
}
