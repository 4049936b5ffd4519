/** The protocols a run can use, by id: one line per protocol (its folder holds everything else). */
import { c3eBench } from "./c3ebench";
import { fbBench } from "./fb-bench";
import { refineBench } from "./refinebench";
import { selfCorrection } from "./self-correction";
import type { Protocol } from "./types";

// Each protocol has its own settings and results types; the registry holds them side by side.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyProtocol = Protocol<any, any>;

export const PROTOCOLS: Record<string, AnyProtocol> = Object.fromEntries(
  [refineBench, selfCorrection, fbBench, c3eBench].map((p: AnyProtocol) => [p.id, p]),
);
export const PROTOCOL_IDS = Object.keys(PROTOCOLS);

export function getProtocol(id: string): AnyProtocol {
  const p = PROTOCOLS[id];
  if (!p) throw new Error(`Unknown protocol "${id}"; expected one of ${PROTOCOL_IDS.join(", ")}`);
  return p;
}
export type { Protocol } from "./types";

/**
 * Checks a run before it starts: the protocol's own problems with the items
 * (e.g. a Self-Correction item without an injected error) and with the target
 * models' providers. Returns one message per problem; empty when the run can go.
 */
export function validateDataset(
  protocolId: string,
  items: import("./types").ItemData[],
  targets: import("./types").TargetInfo[],
  config: unknown,
): string[] {
  const p = getProtocol(protocolId);
  return p.validate ? p.validate(items, targets, config) : [];
}
