/**
 * Node flags the server runs with (npm start, npm run demo, benchmarks, browser tests).
 * A larger young generation: a report over 50,000 labels allocates many short-lived
 * objects, and a 64 MB semi-space lets the scavenger collect them without promoting
 * them (measured on bench:reports: cold agreement page 616 → 524 ms, after a label
 * revision 440 → 344 ms). Starting it at 16 MB instead of growing it from 1 MB saves
 * the first reports a dozen early scavenges (after a label revision: median 275–327 →
 * 231–264 ms over three runs each; 48 MB more reserved memory).
 */
export const SERVER_NODE_FLAGS = ["--max-semi-space-size=64", "--min-semi-space-size=16"];
