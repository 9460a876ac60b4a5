// The status of all four kinds (docs/api.md, "Status and conditions"): KAOS' phase/ready/endpoint/message plus kstatus conditions.
import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { CONDITION_STATUSES } from '../enums.ts';
import { Int32, Int64, MapList, StringEnum } from './helpers.ts';

/** metav1.Condition, with the validation Kubernetes' own CRDs carry for it. */
export const Condition = Type.Object({
  type: Type.String({
    maxLength: 316,
    pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
  }),
  status: StringEnum(CONDITION_STATUSES),
  observedGeneration: Type.Optional(Int64({ minimum: 0 })),
  lastTransitionTime: Type.String({ format: 'date-time' }),
  reason: Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
  message: Type.String({ maxLength: 32768 }),
});
export type Condition = Static<typeof Condition>;

export const ConditionList = MapList(Condition, ['type']);

export const DeploymentStatus = Type.Object({
  replicas: Type.Optional(Int32()),
  readyReplicas: Type.Optional(Int32()),
  availableReplicas: Type.Optional(Int32()),
  updatedReplicas: Type.Optional(Int32()),
  conditions: Type.Optional(ConditionList),
});
export type DeploymentStatus = Static<typeof DeploymentStatus>;

/**
 * What a brand-new object's status reads as, until the controller first writes it: `Ready` is
 * `Unknown`, which kstatus tools (kubectl wait, Argo CD, Flux) read as "in progress", not as done.
 * metav1.Condition requires lastTransitionTime (format date-time), and a CRD default is a constant
 * that the API server validates against this schema, so "now" is impossible: the Unix epoch is
 * valid and plainly means "no transition observed yet". The controller sets the real time.
 */
export const INITIAL_STATUS = initialStatus('Ready', 'Waiting for kaos-operator to reconcile this object');

/** A status whose one condition `type` is Unknown, reason `Pending`, since the epoch (see INITIAL_STATUS). */
export function initialStatus<const T extends string, const M extends string>(type: T, message: M) {
  return { conditions: [{ type, status: 'Unknown', reason: 'Pending', message, lastTransitionTime: '1970-01-01T00:00:00Z' }] } as const;
}

export function StatusSchema<const P extends readonly string[], X extends TProperties>(phases: P, extra: X) {
  return Type.Object(
    {
      phase: Type.Optional(StringEnum(phases)),
      ready: Type.Optional(Type.Boolean()),
      endpoint: Type.Optional(Type.String()),
      message: Type.Optional(Type.String()),
      observedGeneration: Type.Optional(Int64()),
      deployment: Type.Optional(DeploymentStatus),
      conditions: Type.Optional(ConditionList),
      ...extra,
    },
    { default: INITIAL_STATUS },
  );
}
