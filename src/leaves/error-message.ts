// The message of anything thrown, written once: an Error's message, a thrown string as is,
// anything else as String() makes it. A shared leaf (src/leaves/).

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : String(err);
}
