import { afterAll, afterEach, beforeEach, vi } from "vitest";
import { removeMadeTempDirs } from "./temp-dirs";

// The fake OpenAI-compatible servers (fake-llm.ts) listen on 127.0.0.1, a loopback address provider requests may
// reach only when the operator allows it: allowed in this process and the servers, workers and commands it starts
// (they inherit the environment). A test of the refusal sets CONCORD_EGRESS_ALLOW="" for what it starts.
process.env.CONCORD_EGRESS_ALLOW ??= "127.0.0.1,::1";

// Temporary folders a test file made in a hook (a beforeAll's server or database folder), where vitest registers no
// afterAll of their own. Registered before the file's own hooks, so it runs after them (afterAll hooks run in
// reverse order): once the servers, browsers and databases using the folders have stopped.
afterAll(removeMadeTempDirs);

// A stray console.error fails the test that printed it: an error the code logs is a bug the test should see.
let errors: unknown[][] = [];
beforeEach(() => {
  errors = [];
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    errors.push(args);
  });
});
afterEach(() => {
  vi.mocked(console.error).mockRestore();
  if (errors.length > 0) {
    const first = errors[0].map((a) => (a instanceof Error ? a.stack : String(a))).join(" ");
    throw new Error(`console.error was called ${errors.length} time(s): ${first}`);
  }
});
