// AccessGrant (docs/api.md, "AccessGrant"): people, groups and Agents granted access to KAOS
// workloads, by name or label selector. It runs nothing: the controller projects every grant into
// the data of a policy decision point, and its status says whether that happened.
import { Type, type Static } from '@sinclair/typebox';
import { ACCESS_GRANT_RESOURCE_KINDS, ACCESS_GRANT_SUBJECT_KINDS } from '../enums.ts';
import {
  MAX_GRANT_RESOURCES,
  MAX_GRANT_SUBJECTS,
  MAX_LABEL_KEY_LENGTH,
  MAX_NAME_LENGTH,
  MAX_SELECTOR_TERMS,
  MAX_SELECTOR_VALUES,
  MAX_SUBJECT_NAME_LENGTH,
} from './limits.ts';
import { Int64, StringEnum } from './helpers.ts';
import { ConditionList, initialStatus } from './status.ts';

export const AccessGrantSubject = Type.Object({
  kind: StringEnum(ACCESS_GRANT_SUBJECT_KINDS, {
    description: "User: a token's sub or email claim; Group: an entry of its groups claim; Agent: an Agent's name (not projected).",
  }),
  name: Type.String({ minLength: 1, maxLength: MAX_SUBJECT_NAME_LENGTH, description: 'The claim value, or the Agent.' }),
});
export type AccessGrantSubject = Static<typeof AccessGrantSubject>;

/**
 * metav1.LabelSelectorRequirement. `operator` is a plain string, as in Kubernetes' own schema: the
 * validating webhook reports a bad one with Kubernetes' message.
 */
export const LabelSelectorRequirement = Type.Object({
  key: Type.String({ maxLength: MAX_LABEL_KEY_LENGTH, description: 'The label key.' }),
  operator: Type.String({ maxLength: 64, description: 'In, NotIn, Exists or DoesNotExist.' }),
  values: Type.Optional(
    Type.Array(Type.String({ maxLength: MAX_NAME_LENGTH }), {
      maxItems: MAX_SELECTOR_VALUES,
      description: 'Values for In and NotIn; none for Exists and DoesNotExist.',
    }),
  ),
});

/** metav1.LabelSelector: every term must match; an empty selector matches everything. */
export const LabelSelector = Type.Unsafe<{
  matchLabels?: Record<string, string>;
  matchExpressions?: Static<typeof LabelSelectorRequirement>[];
}>({
  type: 'object',
  'x-kubernetes-map-type': 'atomic',
  description: 'Matches Agents, MCPServers, ModelAPIs and MemoryStores of the namespace by label.',
  properties: {
    matchLabels: {
      type: 'object',
      additionalProperties: { type: 'string', maxLength: MAX_NAME_LENGTH },
      maxProperties: MAX_SELECTOR_TERMS,
      description: 'Labels that must have exactly these values.',
    },
    matchExpressions: {
      type: 'array',
      items: LabelSelectorRequirement,
      maxItems: MAX_SELECTOR_TERMS,
      description: 'Requirements on labels, all of which must hold.',
    },
  },
});
export type LabelSelector = Static<typeof LabelSelector>;

export const AccessGrantResource = Type.Object(
  {
    kind: Type.Optional(StringEnum(ACCESS_GRANT_RESOURCE_KINDS, { description: 'The kind of the resource named by name.' })),
    name: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH, description: 'A resource of the namespace, with kind.' })),
    selector: Type.Optional(LabelSelector),
  },
  { description: 'Exactly one of kind and name together, or selector.' },
);
export type AccessGrantResource = Static<typeof AccessGrantResource>;

export const AccessGrantSpec = Type.Object({
  subjects: Type.Array(AccessGrantSubject, { minItems: 1, maxItems: MAX_GRANT_SUBJECTS, description: 'Who is granted access.' }),
  resources: Type.Array(AccessGrantResource, { minItems: 1, maxItems: MAX_GRANT_RESOURCES, description: 'What they may reach, in the grant\'s namespace.' }),
});
export type AccessGrantSpec = Static<typeof AccessGrantSpec>;

/**
 * What a brand-new grant's status reads as until the controller first judges it: `Enforced`
 * Unknown (printed by `kubectl get grants` as such), with the epoch as its transition time, as
 * for the other kinds' `Ready` (status.ts).
 */
export const INITIAL_GRANT_STATUS = initialStatus('Enforced', 'Waiting for kaos-operator to project this AccessGrant');

export const AccessGrantStatus = Type.Object(
  {
    observedGeneration: Type.Optional(Int64({ description: 'The generation the Enforced condition describes.' })),
    conditions: Type.Optional(ConditionList),
  },
  { default: INITIAL_GRANT_STATUS },
);
export type AccessGrantStatus = Static<typeof AccessGrantStatus>;
