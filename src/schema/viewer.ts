import type { Viewer } from '../auth/viewer.ts';
import { builder } from './builder.ts';

/** The caller, as its client token describes it (sub, scope, vaults claims). */
const ViewerType = builder.objectRef<Viewer>('Viewer').implement({
  description: 'The authenticated caller.',
  fields: (t) => ({
    subject: t.exposeString('subject', { description: 'Token subject (`sub`).' }),
    scopes: t.stringList({
      description: 'Upstream scopes granted by the token.',
      resolve: (v) => [...v.scopes].sort(),
    }),
    vaults: t.exposeStringList('vaults', { description: 'Vaults (tenants) the caller may act in.' }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: ViewerType,
    nullable: true,
    description: 'The caller; null without a client token.',
    resolve: (_root, _args, context) => context.viewer,
  }),
);
