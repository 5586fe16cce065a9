/**
 * Visits every item of a live collection once per `periodMs`, a slice at a time (issue 21): one
 * timer for all items (a keep-alive ping per open stream or socket, say) without the burst of
 * visiting them all in one turn of the event loop, which at 10,000 sockets would hold up the
 * deliveries of an event arriving at that moment. Every `periodMs / slices` ms about
 * `size / slices` items are visited, continuing where the last slice stopped; items added meanwhile
 * are visited in the same round when the iteration has not passed them, items removed are not.
 * The timer does not keep the process alive.
 * @param items the live collection (e.g. a `Set` of open streams), read at each slice.
 * @param periodMs how often each item is visited (ms).
 * @param visit called for each item; it must not throw.
 * @param slices slices per period; default 24.
 * @returns stops the sweep.
 */
export function startSweep<T>(
  items: { readonly size: number; values(): Iterator<T> },
  periodMs: number,
  visit: (item: T) => void,
  slices = 24,
): () => void {
  let round: Iterator<T> | undefined;
  const timer = setInterval(
    () => {
      let budget = Math.ceil(items.size / slices);
      while (budget-- > 0) {
        round ??= items.values();
        const step = round.next();
        if (step.done) {
          // The round is over; the next one starts with the next slice.
          round = undefined;
          return;
        }
        visit(step.value);
      }
    },
    Math.max(1, Math.floor(periodMs / slices)),
  ).unref();
  return () => clearInterval(timer);
}
