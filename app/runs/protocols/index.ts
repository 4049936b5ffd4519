/** The protocols a run can use, by id. */
import { c3eBench, type c3eBenchResults } from "./c3ebench";
import { fbBench, type fbBenchResults } from "./fb-bench";
import { refineBench, type refineBenchResults } from "./refinebench";
import { selfCorrection, type selfCorrectionResults } from "./self-correction";
import type { Protocol } from "./types";

// Each protocol has its own settings type; the registry holds them side by side.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const PROTOCOLS: Record<string, Protocol<any>> = {
  [refineBench.id]: refineBench,
  [selfCorrection.id]: selfCorrection,
  [fbBench.id]: fbBench,
  [c3eBench.id]: c3eBench,
};
export const PROTOCOL_IDS = Object.keys(PROTOCOLS);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function getProtocol(id: string): Protocol<any> {
  const p = PROTOCOLS[id];
  if (!p) throw new Error(`Unknown protocol "${id}"; expected one of ${PROTOCOL_IDS.join(", ")}`);
  return p;
}
export type { Protocol } from "./types";

/** What each protocol's results() returns, by protocol id (the results page narrows on `protocol`). */
export type ProtocolResults =
  | ({ protocol: "refinebench" } & ReturnType<typeof refineBenchResults>)
  | ({ protocol: "self-correction" } & ReturnType<typeof selfCorrectionResults>)
  | ({ protocol: "fb-bench" } & ReturnType<typeof fbBenchResults>)
  | ({ protocol: "c3ebench" } & ReturnType<typeof c3eBenchResults>);

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
