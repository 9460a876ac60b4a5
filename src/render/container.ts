// Building blocks for the generated containers: env lists, probes, ports and the
// ContainerOverride of docs/api.md, "Common behaviour".
import { cloneJson } from '../api/json.ts';
import type { ContainerOverrideInput, EnvVarInput, SecretKeySelectorInput } from './inputs.ts';
import type { Container, ContainerPort, EnvVar, Probe, SecretKeySelector } from './k8s.ts';

export function env(name: string, value: string): EnvVar {
  return { name, value };
}

/** A copy of a user EnvVar with only the fields core/v1 EnvVar has, sharing nothing. */
export function copyEnvVar(input: EnvVarInput): EnvVar {
  const out: EnvVar = { name: input.name };
  if (input.value !== undefined) out.value = input.value;
  if (input.valueFrom !== undefined) out.valueFrom = cloneJson(input.valueFrom);
  return out;
}

export function copyEnv(list: readonly EnvVarInput[] | undefined): EnvVar[] {
  return (list ?? []).map(copyEnvVar);
}

export function hasEnv(list: readonly EnvVarInput[] | undefined, name: string): boolean {
  return (list ?? []).some((e) => e.name === name);
}

export function copySecretKeySelector(input: SecretKeySelectorInput): SecretKeySelector {
  const out: SecretKeySelector = { key: input.key };
  if (input.name !== undefined) out.name = input.name;
  if (input.optional !== undefined) out.optional = input.optional;
  return out;
}

/**
 * Resolves duplicate names the way the kubelet does (the last entry wins) and keeps that entry
 * where it stands, so the list has unique names: server-side apply treats a container's env as
 * a map keyed by name and rejects an applied list with duplicate keys.
 */
export function uniqueEnv(list: readonly EnvVar[]): EnvVar[] {
  const lastIndex = new Map<string, number>();
  list.forEach((e, i) => lastIndex.set(e.name, i));
  return list.filter((e, i) => lastIndex.get(e.name) === i);
}

/**
 * The user's list placed between generated runs, as the newer KAOS shapes order env: the user's
 * entries win a clash wherever they stand (an earlier generated one gives way to the user's, a
 * later one is left out), so a variable the user sets is never overridden.
 */
export function placeUserEnv(before: readonly EnvVar[], user: readonly EnvVar[], after: readonly EnvVar[]): EnvVar[] {
  const userNames = new Set(user.map((e) => e.name));
  return uniqueEnv([...before, ...user, ...after.filter((e) => !userNames.has(e.name))]);
}

export function httpPort(port: number): ContainerPort {
  return { name: 'http', containerPort: port, protocol: 'TCP' };
}

export interface ProbeTiming {
  readonly initialDelaySeconds: number;
  readonly periodSeconds: number;
  readonly timeoutSeconds?: number;
  readonly failureThreshold?: number;
}

function timing(t: ProbeTiming): Omit<Probe, 'httpGet' | 'tcpSocket'> {
  const out: Omit<Probe, 'httpGet' | 'tcpSocket'> = {
    initialDelaySeconds: t.initialDelaySeconds,
    periodSeconds: t.periodSeconds,
  };
  if (t.timeoutSeconds !== undefined) out.timeoutSeconds = t.timeoutSeconds;
  if (t.failureThreshold !== undefined) out.failureThreshold = t.failureThreshold;
  return out;
}

export function httpGetProbe(path: string, port: number, t: ProbeTiming): Probe {
  return { httpGet: { path, port, scheme: 'HTTP' }, ...timing(t) };
}

export function tcpSocketProbe(port: number, t: ProbeTiming): Probe {
  return { tcpSocket: { port }, ...timing(t) };
}

/**
 * Applies spec.container to the generated main container. image, command, args and resources
 * replace the generated values when given (an empty command/args list clears them, i.e. the
 * image's own entrypoint runs). env entries are appended after the generated ones and win on
 * name clashes: a generated entry with the same name is dropped, the user's entry is appended
 * (so the user's entries always come last, in the user's order).
 */
export function applyContainerOverride(container: Container, override: ContainerOverrideInput | undefined): Container {
  const out: Container = { ...container };
  if (override === undefined) return out;
  if (override.image !== undefined && override.image !== '') out.image = override.image;
  if (override.command !== undefined) setList(out, 'command', override.command);
  if (override.args !== undefined) setList(out, 'args', override.args);
  if (override.resources !== undefined) out.resources = cloneJson(override.resources);
  if (override.env !== undefined && override.env.length > 0) {
    const userEnv = copyEnv(override.env);
    const userNames = new Set(userEnv.map((e) => e.name));
    const generated = (out.env ?? []).filter((e) => !userNames.has(e.name));
    out.env = uniqueEnv([...generated, ...userEnv]);
  }
  return out;
}

/** The override without its env (for a renderer that has already placed spec.container.env). */
export function withoutEnv(override: ContainerOverrideInput | undefined): ContainerOverrideInput | undefined {
  if (override?.env === undefined) return override;
  const { env: _env, ...rest } = override;
  return rest;
}

function setList(container: Container, field: 'command' | 'args', value: readonly string[]): void {
  if (value.length === 0) delete container[field];
  else container[field] = [...value];
}
