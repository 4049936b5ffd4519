/**
 * removeDeadJobFolders (issue 36, item 5): at start, the server removes the
 * upload folders of import jobs whose server died while they ran and of
 * imports that had finished, and nothing else: a live server's job, another
 * machine's, an upload waiting for its preview, a name that is not a token,
 * a link's target.
 */
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { JOB_MARKER, removeDeadJobFolders } from "../../../app/formats/import-jobs.server";
import { tempDir } from "../../support/db";

const token = () => crypto.randomBytes(16).toString("hex");

/** A process ID that no process has now: a child that has already exited (IDs are not reused this soon). */
const DEAD = spawnSync("true").pid!;
const deadPid = () => DEAD;

function folder(root: string, files: Record<string, string>, name = token()): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
  return name;
}

const marker = (server: number, host = os.hostname()) => JSON.stringify({ host, server, child: deadPid(), kind: "confirm", startedAt: 0 });
const meta = JSON.stringify({ project: "p", stored: "upload.csv" });

describe("removeDeadJobFolders", () => {
  it("removes a dead server's job and a finished import; keeps the rest", () => {
    const root = path.join(tempDir("concord-dead-jobs-"), "concord-uploads");
    const deadServer = folder(root, { [JOB_MARKER]: marker(deadPid()), "meta.json": meta, "upload.csv": "a\n", "stage.db": "x" });
    const predecessor = folder(root, { [JOB_MARKER]: marker(process.pid), "meta.json": meta, "upload.csv": "a\n" });
    const finished = folder(root, { "meta.json": meta });
    const liveServer = folder(root, { [JOB_MARKER]: marker(process.ppid), "meta.json": meta, "upload.csv": "a\n" });
    const otherHost = folder(root, { [JOB_MARKER]: marker(deadPid(), "another-host.invalid"), "meta.json": meta, "upload.csv": "a\n" });
    const waiting = folder(root, { "meta.json": meta, "upload.csv": "a\n" });
    const arriving = folder(root, { "upload.csv": "a\n" });
    const notAToken = folder(root, { [JOB_MARKER]: marker(deadPid()) }, "notes");
    // A link named as a token, to a folder that looks like a dead job: the link is not followed.
    const outside = tempDir("concord-dead-jobs-outside-");
    fs.writeFileSync(path.join(outside, JOB_MARKER), marker(deadPid()));
    const link = token();
    fs.symlinkSync(outside, path.join(root, link));

    expect(removeDeadJobFolders(root)).toBe(3);
    const left = fs.readdirSync(root).sort();
    expect(left).toEqual([liveServer, otherHost, waiting, arriving, notAToken, link].sort());
    expect(left).not.toContain(deadServer);
    expect(left).not.toContain(predecessor);
    expect(left).not.toContain(finished);
    expect(fs.readdirSync(outside)).toEqual([JOB_MARKER]);
  });

  it("an uploads folder that does not exist yet: nothing to do", () => {
    expect(removeDeadJobFolders(path.join(tempDir("concord-dead-jobs-"), "missing"))).toBe(0);
  });
});
