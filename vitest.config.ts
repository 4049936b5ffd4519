import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: {
      "~": fileURLToPath(new URL("./app", import.meta.url)),
    },
  },
  test: {
    include: ["tests/**/*.test.ts", "tests/**/*.test.tsx"],
    setupFiles: ["tests/support/setup.ts"],
    globalSetup: ["tests/support/global-setup.ts"],
    pool: "forks",
    // Browser tests sign in (scrypt), start servers and import jobs; on 2 busy cores one can take over 30 s without
    // anything being wrong. Timeouts are not what these tests assert (speed is measured by the benchmarks).
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
