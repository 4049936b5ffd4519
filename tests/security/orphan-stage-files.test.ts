/**
 * Removing the stage files of imports killed midway (removeOrphanStageFiles): only files named as an import names
 * its stage, only when their process is gone, and never what a link with such a name points to.
 */
import { spawnSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { newStageFilePath, removeOrphanStageFiles } from "../../app/formats/stage-file.server";
import { tempDir } from "../support/db";

/** The id of a process that has ended. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
afterAll(() => {
  live.kill("SIGKILL");
});

describe("stage files of imports killed midway", () => {
  it("are removed when their process is gone (old names: after a day); a live import's, other names and a link's target stay", () => {
    const dir = tempDir("concord-orphans-");
    const dead = deadPid();
    const hex = "0123456789abcdef";
    const touch = (name: string, text = "staged rows") => {
      fs.writeFileSync(path.join(dir, name), text);
      return name;
    };
    const orphan = touch(`concord-stage-${dead}-${hex}.db`);
    const running = touch(`concord-stage-${live.pid}-${hex}.db`);
    const mine = touch(`concord-stage-${process.pid}-${hex}.db`);
    const others = [
      touch(`concord-stage-${dead}-${hex}.db.bak`),
      touch(`concord-stage-${dead}-0123.db`),
      touch(`concord-stage-${hex}.db`), // the name before the process id was part of it, written just now
      touch("report.db"),
    ];
    // The old name, untouched for two days: whose it was is unknown, but no import keeps a stage that long.
    const legacy = touch("concord-stage-aaaaaaaaaaaaaaaa.db");
    const twoDaysAgo = (Date.now() - 2 * 86_400_000) / 1000;
    fs.utimesSync(path.join(dir, legacy), twoDaysAgo, twoDaysAgo);
    // A link named as a dead import's stage, pointing at a file of someone else's: the link goes, the file stays.
    const precious = path.join(tempDir("concord-precious-"), "precious.db");
    fs.writeFileSync(precious, "not ours");
    const link = `concord-stage-${dead}-fedcba9876543210.db`;
    fs.symlinkSync(precious, path.join(dir, link));

    expect(removeOrphanStageFiles(dir)).toBe(3);
    const left = fs.readdirSync(dir).sort();
    expect(left).not.toContain(orphan);
    expect(left).not.toContain(legacy);
    expect(left).not.toContain(link);
    expect(left).toEqual([running, mine, ...others].sort());
    expect(fs.readFileSync(precious, "utf8")).toBe("not ours");
  });

  it("names a new stage file after this process, in the OS temp folder", () => {
    const file = newStageFilePath();
    expect(path.basename(file)).toMatch(new RegExp(`^concord-stage-${process.pid}-[0-9a-f]{16}\\.db$`));
    expect(newStageFilePath()).not.toBe(file);
  });

  it("a folder that cannot be read removes nothing and throws nothing", () => {
    expect(removeOrphanStageFiles(path.join(tempDir("concord-orphans-"), "missing"))).toBe(0);
  });
});
