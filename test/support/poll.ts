// The one polling helper of the tests: waits for something asynchronous to happen, with a deadline
// and a description, so a test that waits in vain fails naming what it waited for instead of
// running into tap's timeout. It waits; it asserts nothing: the test asserts what it waited for.

export interface PollOptions {
  /** Give up after this long; default 10 s. */
  timeoutMs?: number;
  /** Pause between probes; default 20 ms. */
  intervalMs?: number;
  /**
   * A probe that throws is tried again (e.g. a read while the API server restarts) instead of
   * failing the wait; the timeout then names the last error. Default false: a throw fails at once.
   */
  retryErrors?: boolean;
}

/**
 * Calls `probe` until it returns something other than `false`, `undefined` or `null`, and returns
 * that. Throws `timed out after N ms waiting for <what>` once the deadline has passed.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | false | undefined | null | Promise<T | false | undefined | null>,
  options: PollOptions = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 20, retryErrors = false } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    try {
      const value = await probe();
      if (value !== false && value !== undefined && value !== null) return value;
    } catch (err) {
      if (!retryErrors) throw err;
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError === '' ? '' : ` (last error: ${lastError})`}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
