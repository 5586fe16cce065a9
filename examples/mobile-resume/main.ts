/**
 * A mobile app's live card events that survive a disconnect: subscribe over graphql-ws, keep the
 * `cursor` of the last event handled, and after the connection drops subscribe again with
 * `after: cursor`; the gateway replays what was missed from its durable log, then goes live, with no
 * gap and no duplicate. Here the "disconnect" is the client disposed between two enrolments, and the
 * cursor lives in a variable where an app would keep it in its storage.
 *
 * Run: `npx tsc -p examples/tsconfig.json` (strict; writes examples/.build/), then
 * `TOKEN=$(npm run -s token -- --vault tntsandbox1) npx node examples/.build/examples/mobile-resume/main.js`
 * (`GRAPHQL_URL` defaults to http://127.0.0.1:4000/graphql). Prints one JSON line per event.
 */
import { print } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import {
  EnrolCardWithWebhookDocument,
  LiveCardEventsDocument,
  type LiveCardEventsSubscription,
} from '../../src/client/generated/index.ts';

const url = process.env.GRAPHQL_URL ?? 'http://127.0.0.1:4000/graphql';
const token = process.env.TOKEN;
if (!token) throw new Error('TOKEN is not set: TOKEN=$(npm run -s token -- --vault tntsandbox1)');
const authorization = `Bearer ${token}`;

type CardEvent = LiveCardEventsSubscription['cardEvents'];

/** Enrols a card over HTTP (its `au_card.enrolled` event follows about a second later). */
async function enrol(number: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ query: print(EnrolCardWithWebhookDocument), variables: { number } }),
  });
  const { data } = (await response.json()) as {
    data: { enrollAccountUpdaterCard: { __typename: string; data?: { cardId: string } } };
  };
  const cardId = data.enrollAccountUpdaterCard.data?.cardId;
  if (!cardId) throw new Error(`enrolment failed: ${data.enrollAccountUpdaterCard.__typename}`);
  return cardId;
}

/**
 * Subscribes from `after` (the start of the live stream when undefined) and resolves with the first
 * event of `cardId`, handing every event to `handle` on the way.
 */
function eventOf(
  client: Client,
  after: string | undefined,
  cardId: string,
  handle: (event: CardEvent) => void,
) {
  return new Promise<CardEvent>((resolve, reject) => {
    const stop = client.subscribe<LiveCardEventsSubscription>(
      { query: print(LiveCardEventsDocument), variables: { after } },
      {
        next: ({ data }) => {
          if (!data) return;
          handle(data.cardEvents);
          if (data.cardEvents.cardId === cardId) {
            stop();
            resolve(data.cardEvents);
          }
        },
        error: reject,
        complete: () => reject(new Error('the subscription completed')),
      },
    );
  });
}

let cursor: string | undefined; // an app keeps it in its storage
const seen: string[] = [];
const handle = (event: CardEvent) => {
  seen.push(event.id);
  cursor = event.cursor;
};

// Online: live events from now on.
let client = createClient({ url: url.replace(/^http/, 'ws'), connectionParams: { authorization } });
const first = await enrol('4000210000395001');
const firstEvent = await eventOf(client, cursor, first, handle);
console.log(JSON.stringify({ live: firstEvent.type }));
await client.dispose();

// Offline: an event happens meanwhile.
const second = await enrol('5100260000895001');

// Back online: resume after the last cursor handled: what was missed is replayed, then live events.
client = createClient({ url: url.replace(/^http/, 'ws'), connectionParams: { authorization } });
const resumed = await eventOf(client, cursor, second, handle);
console.log(JSON.stringify({ resumed: resumed.type, duplicates: seen.length - new Set(seen).size }));
await client.dispose();
