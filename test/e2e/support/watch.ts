// Every version of one object as a watch delivers it (`kubectl get -w`): each status the object
// went through, in order, none missed between two polls — what a rollout test reads to prove that
// a state was or was not reached.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ControlPlane } from '../../cluster/control-plane.ts';

export interface Seen {
  resourceVersion: string;
  generation: number;
  status: Record<string, unknown>;
}

export interface Watcher {
  /** Every version delivered so far, the first being the object as it was when the watch began. */
  readonly seen: readonly Seen[];
  stop(): Promise<void>;
}

/** Runs `kubectl get <resource> <name> -w -o jsonpath=<template>` and hands each line it prints to `onLine`. */
function watchLines(plane: ControlPlane, resource: string, namespace: string, name: string, template: string, onLine: (line: string) => void): () => Promise<void> {
  const child = spawn(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfigPath, 'get', resource, name, '-n', namespace, '-w', '-o', `jsonpath=${template}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return async () => {
    child.kill('SIGTERM');
    await exited;
  };
}

export function watchObject(plane: ControlPlane, resource: string, namespace: string, name: string): Watcher {
  const seen: Seen[] = [];
  // Space-separated: kubectl's watch output expands tabs.
  const stop = watchLines(plane, resource, namespace, name, '{.metadata.resourceVersion} {.metadata.generation} {.status}{"\\n"}', (line) => {
    const m = /^(\S+) +(\S+) *(.*)$/.exec(line);
    if (m === null) return;
    const status = m[3] ?? '';
    seen.push({ resourceVersion: m[1] ?? '', generation: Number(m[2]), status: status === '' ? {} : (JSON.parse(status) as Record<string, unknown>) });
  });
  return { seen, stop };
}

/** Every holder a Lease names, in order, as a watch delivers each version ('' for none). */
export function watchLeaseHolders(plane: ControlPlane, namespace: string, name: string): { readonly seen: readonly string[]; stop(): Promise<void> } {
  const seen: string[] = [];
  const stop = watchLines(plane, 'lease', namespace, name, 'holder={.spec.holderIdentity}{"\\n"}', (line) => {
    if (line.startsWith('holder=')) seen.push(line.slice('holder='.length));
  });
  return { seen, stop };
}
