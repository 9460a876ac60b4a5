// A pure function's answers for its most recent distinct arguments, for parses that many readers
// repeat on the same input (one LiteLLM config read by its ModelAPI's review, every Agent that
// names it and every reconcile of those Agents). Keyed by the argument itself, so an answer can
// never be stale; a string key is compared by content (its hash is cached in the string), so an
// object's config read again from the cache at the same resourceVersion costs a lookup.
// Bounded: the least recently used answer goes first.

/** `fn`, answering each of its last `capacity` distinct arguments from memory. */
export function recentMemo<A, R>(fn: (argument: A) => R, capacity: number): (argument: A) => R {
  const answers = new Map<A, R>();
  return (argument) => {
    if (answers.has(argument)) {
      const answer = answers.get(argument) as R;
      // Most recently used last: Map iterates in insertion order.
      answers.delete(argument);
      answers.set(argument, answer);
      return answer;
    }
    const answer = fn(argument);
    answers.set(argument, answer);
    if (answers.size > capacity) answers.delete(answers.keys().next().value as A);
    return answer;
  };
}
