import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import SlowestFirst from "./tests/support/sequencer.mjs";

/**
 * Test files whose assertions depend on timing or on how busy the machine is (leases and lock waits, killed
 * processes, sign-in throttles, keep-alive sockets, shutdown deadlines): they run one file at a time, after the others.
 */
const ONE_AT_A_TIME = [
  "tests/integration/scale-out-pg.test.ts",
  "tests/integration/pg-worker.test.ts",
  "tests/integration/pg-queue.test.ts",
  "tests/integration/runs-kill.test.ts",
  "tests/integration/runs-limits.test.ts",
  "tests/integration/busy-wait.test.ts",
  "tests/integration/checkpointer.test.ts",
  "tests/integration/import-waiting-writer.test.ts",
  "tests/integration/import-lock-holds.test.ts",
  "tests/integration/import-chunked-commit.test.ts",
  "tests/integration/import-load.test.ts",
  "tests/integration/import-job-server-dies.test.ts",
  "tests/api/imports-server-dies.test.ts",
  "tests/integration/auth-dialects.test.ts",
  "tests/unit/runs/keep-alive.test.ts",
  "tests/unit/runs/pg-admission-line.test.ts",
  "tests/security/headers-and-shutdown.test.ts",
  "tests/security/shutdown-under-load.test.ts",
  "tests/security/throttle.test.ts",
  "tests/security/heavy-reads.test.ts",
  "tests/api/exports.test.ts",
];
const ALL = ["tests/**/*.test.ts", "tests/**/*.test.tsx"];

export default defineConfig({
  resolve: {
    alias: {
      "~": fileURLToPath(new URL("./app", import.meta.url)),
    },
  },
  test: {
    setupFiles: ["tests/support/setup.ts"],
    globalSetup: ["tests/support/global-setup.ts"],
    pool: "forks",
    sequence: { sequencer: SlowestFirst },
    // Browser tests sign in (scrypt), start servers and import jobs; on 2 busy cores one can take over 30 s without
    // anything being wrong. Timeouts are not what these tests assert (speed is measured by the benchmarks).
    testTimeout: 90_000,
    hookTimeout: 120_000,
    // Every test file has its own temp databases, folders and ports, so most run two at a time (on 2 cores vitest
    // would otherwise run one: os.availableParallelism() - 1), the browser tests among them (what they assert is what
    // the page shows, never how fast; the minute-long shared-limits test waits more than it computes, so another
    // file uses the cores meanwhile); the timing-sensitive ones then run alone.
    projects: [
      { extends: true, test: { name: "parallel", include: ALL, exclude: ONE_AT_A_TIME, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "one-at-a-time", include: ONE_AT_A_TIME, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
