/**
 * Lookups over the task kinds (./kinds.ts): everything that behaves differently per
 * kind asks here. Pure and client-safe.
 */
import * as KINDS from "./kinds";
import type { TaskKind } from "./types";

type Kinds = (typeof KINDS)[keyof typeof KINDS];
/** The name of a kind labelled in Concord ("imported-labels" is not one: its labels come from a file). */
export type AnnotatableKind = Kinds["id"];

/** Every kind, in the registry's order. */
export const TASK_KIND_LIST: readonly TaskKind<AnnotatableKind>[] = Object.values(KINDS);
const BY_ID = new Map<string, TaskKind<AnnotatableKind>>(TASK_KIND_LIST.map((k) => [k.id, k]));

export const ANNOTATABLE_KINDS: AnnotatableKind[] = TASK_KIND_LIST.map((k) => k.id);

export function isAnnotatable(kind: string): kind is AnnotatableKind {
  return BY_ID.has(kind);
}

/** The kind's module, or undefined for a kind not labelled in Concord (imported labels). */
export function findKind(kind: string): TaskKind<AnnotatableKind> | undefined {
  return BY_ID.get(kind);
}

/** The kind's module; throws for a kind not labelled in Concord. */
export function taskKind(kind: string): TaskKind<AnnotatableKind> {
  const k = BY_ID.get(kind);
  if (!k) throw new Error(`task kind "${kind}" is not labelled in Concord`);
  return k;
}

/** The ids of the kinds with a property (e.g. the kinds whose units show the reference). */
export function kindsWhere(test: (k: TaskKind) => boolean): AnnotatableKind[] {
  return TASK_KIND_LIST.filter(test).map((k) => k.id);
}
