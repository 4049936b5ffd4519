/**
 * .ci/run runs the suite with CI set, so the checks that only warn on a developer's machine (the downloads test's
 * pandas.read_csv of every exported CSV) fail in CI instead of passing silently.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/db";

const script = path.resolve(import.meta.dirname, "../../.ci/run");

describe(".ci/run", () => {
  it("runs npm test and the isolation sample with CI=1", () => {
    // Stand-ins for the commands the script calls record what they were given and do nothing else.
    const bin = tempDir("concord-ci-run-");
    const log = path.join(bin, "calls.log");
    for (const cmd of ["apt-get", "npm", "node"]) {
      const stub = path.join(bin, cmd);
      fs.writeFileSync(stub, `#!/bin/sh\necho "${cmd} $* CI=\${CI-unset}" >> "${log}"\n`);
      fs.chmodSync(stub, 0o755);
    }
    const sudo = path.join(bin, "sudo");
    fs.writeFileSync(sudo, `#!/bin/sh\nexec "$@"\n`);
    fs.chmodSync(sudo, 0o755);
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    delete env.CI;
    const run = spawnSync("bash", [script], { env, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const calls = fs.readFileSync(log, "utf8").trim().split("\n");
    expect(calls).toContain("npm test CI=1");
    expect(calls).toContain("node scripts/tests-alone.mjs CI=1");
  });
});
