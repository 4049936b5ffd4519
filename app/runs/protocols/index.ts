/** The protocols a run can use, by id. */
import { c3eBench } from "./c3ebench";
import { fbBench } from "./fbbench";
import { refineBench } from "./refinebench";
import { selfCorrection } from "./selfcorrection";
import type { Protocol } from "./types";

export const PROTOCOLS: Record<string, Protocol<any>> = {
  [refineBench.id]: refineBench,
  [selfCorrection.id]: selfCorrection,
  [fbBench.id]: fbBench,
  [c3eBench.id]: c3eBench,
};
export const PROTOCOL_IDS = Object.keys(PROTOCOLS);

export function getProtocol(id: string): Protocol<any> {
  const p = PROTOCOLS[id];
  if (!p) throw new Error(`Unknown protocol "${id}"; expected one of ${PROTOCOL_IDS.join(", ")}`);
  return p;
}
export type { Protocol } from "./types";
