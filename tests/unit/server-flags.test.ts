/** npm start and npm run demo run the server with the same Node flags as the benchmarks and browser tests. */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SERVER_NODE_FLAGS } from "../../scripts/server-flags";

describe("server Node flags", () => {
  it("are the ones package.json's start and demo scripts pass to node", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    for (const name of ["start", "demo"]) {
      expect(pkg.scripts[name], name).toContain(`node ${SERVER_NODE_FLAGS.join(" ")} scripts/cli.mjs server`);
    }
  });
});
