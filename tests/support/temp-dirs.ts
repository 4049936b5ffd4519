/**
 * The temporary folders tests/support/db.ts's tempDir made in this test file's process and has not removed yet;
 * tests/support/setup.ts removes them at the end of the file. A module of its own that loads no database code,
 * since every test file runs the setup.
 */
import fs from "node:fs";

export const madeTempDirs = new Set<string>();

export function removeMadeTempDirs(): void {
  for (const dir of madeTempDirs) fs.rmSync(dir, { recursive: true, force: true });
  madeTempDirs.clear();
}
