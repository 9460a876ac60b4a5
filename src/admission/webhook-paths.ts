// The URL paths of the admission webhooks, written once: the router serves them and the
// Mutating/ValidatingWebhookConfigurations point at them. The shape is kubebuilder's
// (`/<mutate|validate>-<group with dots as dashes>-<version>-<lower-case kind>`) so that
// anyone who has run a controller-runtime operator recognises them.
import type { WebhookType } from './types.ts';
import { GROUP, KINDS, VERSION, type KaosKind } from '../api/kinds.ts';

export const WEBHOOK_TYPES: readonly WebhookType[] = ['mutate', 'validate'];

export interface WebhookEndpoint {
  readonly type: WebhookType;
  readonly kind: KaosKind;
  readonly path: string;
}

export function webhookPath(type: WebhookType, kind: KaosKind): string {
  return `/${type}-${GROUP.replaceAll('.', '-')}-${VERSION}-${kind.toLowerCase()}`;
}

/** Every endpoint the operator serves: one mutating and one validating per kind. */
export const WEBHOOK_ENDPOINTS: readonly WebhookEndpoint[] = WEBHOOK_TYPES.flatMap((type) =>
  KINDS.map((kind) => ({ type, kind, path: webhookPath(type, kind) })),
);

/** The endpoint served at `path`, or undefined when the path is not a webhook. */
export function endpointForPath(path: string): WebhookEndpoint | undefined {
  return WEBHOOK_ENDPOINTS.find((e) => e.path === path);
}
