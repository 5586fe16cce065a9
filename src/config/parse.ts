import type { z } from 'zod';

/** Thrown when the environment holds a bad setting; `message` lists every bad variable by name, never its value. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * `env` without its empty variables: an empty value (`PORT=` in an env file) is unset, for every
 * variable, so `.env.example` works as an env file as it stands.
 */
export function withoutEmptyValues(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value !== '') out[name] = value;
  return out;
}

/**
 * Parses `env` (empty values unset) with `schema`.
 * @throws ConfigError naming each bad variable with the reason, never its value.
 */
export function parseSettings<Schema extends z.ZodType>(
  schema: Schema,
  env: Record<string, string | undefined>,
): z.output<Schema> {
  const parsed = schema.safeParse(withoutEmptyValues(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (issue) => `  ${issue.path.join('.') || '(environment)'}: ${issue.message}`,
    );
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
