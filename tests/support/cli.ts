/** A repository script run as an operator runs it (`node --import tsx scripts/NAME.ts …`), its exit code and output. */
import { spawn } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

export type ScriptResult = { code: number | null; out: string; err: string };

export function runScript(script: string, args: string[], env: Record<string, string>): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["scripts/cli.mjs", script, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    // Decoded as a stream: a chunk may end inside a multi-byte UTF-8 character, which per-chunk decoding would break.
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => resolve({ code, out, err }));
  });
}
