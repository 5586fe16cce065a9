/**
 * snake_case ↔ camelCase for wire documents: the REST areas name members in snake_case
 * (`exp_month`), the gateway's domain values in camelCase (`expMonth`). The types follow the values,
 * so a member added to a contract (src/contracts) appears, renamed, in the domain type derived from
 * it without further code.
 */

/** `exp_month` → `expMonth`; `address1` stays. */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** `expMonth` → `exp_month`; `address1` stays. */
export type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

/** Values whose keys are not renamed (`string & {}` of open enums included). */
type Leaf = string | number | boolean | bigint | symbol | null | undefined;

/** `T` with every object key camelCased, recursively through objects and arrays. */
export type CamelCaseKeys<T> = T extends Leaf
  ? T
  : T extends readonly (infer Item)[]
    ? CamelCaseKeys<Item>[]
    : { [K in keyof T as K extends string ? (string extends K ? K : CamelCase<K>) : K]: CamelCaseKeys<T[K]> };

/** `T` with every object key snake_cased, recursively through objects and arrays. */
export type SnakeCaseKeys<T> = T extends Leaf
  ? T
  : T extends readonly (infer Item)[]
    ? SnakeCaseKeys<Item>[]
    : { [K in keyof T as K extends string ? (string extends K ? K : SnakeCase<K>) : K]: SnakeCaseKeys<T[K]> };

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function convertKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => convertKeys(item, rename));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    // Absent and undefined mean the same on the wire: undefined members are left out.
    if (member !== undefined) out[rename(key)] = convertKeys(member, rename);
  }
  return out;
}

/**
 * A deep copy with camelCased keys and without undefined members. Not for free-form user data
 * (`data.meta`), whose keys are the user's.
 */
export function camelCaseKeys<T>(value: T): CamelCaseKeys<T> {
  return convertKeys(value, camel) as CamelCaseKeys<T>;
}

/** A deep copy with snake_cased keys and without undefined members (request bodies). */
export function snakeCaseKeys<T>(value: T): SnakeCaseKeys<T> {
  return convertKeys(value, snake) as SnakeCaseKeys<T>;
}
