/**
 * Starts the real production server (scripts/server.ts on the Remix build in
 * build/, made once by tests/support/global-setup.ts) on a free port with its
 * own temporary database.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./db";
import { SERVER_NODE_FLAGS } from "../../scripts/server-flags";

export const ROOT = path.resolve(__dirname, "../..");

export type RunningApp = {
  url: string;
  databaseFile: string;
  stop: () => Promise<void>;
  /** Everything the server printed, for debugging a failed test. */
  output: () => string;
};

/**
 * @param prepare runs before the server starts, with the database file path
 *   (for example to seed it with seedDemo(openDatabase(file))).
 */
export async function startApp(prepare?: (databaseFile: string) => Promise<void> | void): Promise<RunningApp> {
  const dir = tempDir("concord-app-");
  const databaseFile = path.join(dir, "app.db");
  if (prepare) await prepare(databaseFile);
  const child: ChildProcess = spawn(process.execPath, [...SERVER_NODE_FLAGS, "--import", "tsx", "scripts/server.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseFile, PORT: "0", NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 30 s:\n${out}`)), 30_000);
    const check = () => {
      const m = out.match(/running at (http:\/\/localhost:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on("data", check);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    databaseFile,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
