import type { BuilderTypes } from './builder.ts';

/**
 * `createdAt` and `updatedAt` of a card interface record (card, update subscription): ISO 8601 UTC
 * with milliseconds, as the upstream client normalises every card interface timestamp
 * (docs/gap-decisions.md "Upstream clients").
 */
export function recordTimes<Parent extends { createdAt: string; updatedAt: string }>(
  t: PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, Parent>,
) {
  return {
    createdAt: t.field({
      type: 'DateTime',
      description: 'Creation time, ISO 8601 UTC with milliseconds.',
      resolve: (record) => record.createdAt,
    }),
    updatedAt: t.field({
      type: 'DateTime',
      description: 'Last update time, ISO 8601 UTC with milliseconds.',
      resolve: (record) => record.updatedAt,
    }),
  };
}

/**
 * {@link recordTimes} of a record whose answer may omit them: the card interface's documented create
 * answer (sandbox contract §8) carries neither, so `Card.createdAt`/`updatedAt` are null then.
 */
export function optionalRecordTimes<Parent extends { createdAt?: string; updatedAt?: string }>(
  t: PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, Parent>,
) {
  return {
    createdAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'Creation time, ISO 8601 UTC with milliseconds; null when the upstream answer did not give it (the documented create answer).',
      resolve: (record) => record.createdAt ?? null,
    }),
    updatedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'Last update time, ISO 8601 UTC with milliseconds; null when the upstream answer did not give it (the documented create answer).',
      resolve: (record) => record.updatedAt ?? null,
    }),
  };
}
