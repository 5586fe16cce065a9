import { builder } from './builder.ts';
import { describeResultData } from './generated-descriptions.ts';
import './scalars.ts';
import './errors.ts';
import './viewer.ts';
import './card.ts';
import './card-update-subscription.ts';
import './account-updater-card.ts';
import './card-event.ts';
import './card-attributes.ts';
import './network-token.ts';
import './unmapped-notification.ts';
import './organization.ts';

/** The gateway's GraphQL schema, built once at import. */
export const schema = describeResultData(builder.toSchema({ sortSchema: true }));
