/**
 * An import killed midway: runImport in a process of its own, paused after its
 * fifth chunk of the chunked write, then killed with SIGKILL (no cleanup runs).
 * What it wrote is left in the database, invisible, with its pending_imports row, and its stage file in the OS temp
 * folder. Resolves with the killed process's id.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export async function killImportMidway(opts: {
  databaseFile: string;
  projectSlug: string;
  file: string;
  scratchDir: string;
}): Promise<number> {
  const script = path.join(opts.scratchDir, `killed-import-${process.pid}-${Date.now()}.mts`);
  fs.writeFileSync(
    script,
    `import { runImport } from ${JSON.stringify(path.resolve("app/formats/import.server.ts"))};
await runImport({
  databaseFile: ${JSON.stringify(opts.databaseFile)}, projectSlug: ${JSON.stringify(opts.projectSlug)}, preset: "labels-long",
  file: ${JSON.stringify(opts.file)}, chunkTargetMs: 2,
  onCommitChunk: async (e) => { if (e.chunk === 5) { process.stdout.write("midway\\n"); await new Promise((r) => setTimeout(r, 60_000)); } },
});
`,
  );
  const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("midway")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`the import ended (${code}) before it was killed`)));
  });
  child.kill("SIGKILL");
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}
