// The server-side dry run admission uses to have the API server judge a pod it cannot judge
// itself: a create that writes nothing. The API's error is translated here, at the edge, into
// the Status the API server sent, so admission sees an answer and never a client or an exception.
import type { Refusal } from './meta.ts';
import type { KubeClient } from './client.ts';
import { ApiError } from './errors.ts';
import { DEPLOYMENT, resourcePath } from './paths.ts';

export interface DryRunOptions {
  /** The webhook has timeoutSeconds 5 in all; the dry run must leave room for the rest. */
  timeoutMs?: number;
}

/**
 * Dry-run creates a Deployment in `namespace`. Resolves with the API server's verdict (accepted,
 * or its Status); rejects only when there is no verdict (timeout, connection lost).
 */
export function deploymentDryRun(
  client: Pick<KubeClient, 'create'>,
  options: DryRunOptions = {},
): (namespace: string, deployment: object) => Promise<{ ok: true } | { ok: false; status: Refusal }> {
  const timeoutMs = options.timeoutMs ?? 2500;
  return async (namespace, deployment) => {
    try {
      // Only the verdict is read: the Deployment it would have created is not sent back.
      await client.create(resourcePath(DEPLOYMENT, { namespace }), deployment, { dryRun: true, timeoutMs, metadataOnly: true });
      return { ok: true };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return { ok: false, status: { code: err.code, reason: err.reason, message: err.message, details: err.details } };
    }
  };
}
