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

/**
 * An HTTP client for the running app that behaves like a browser: it keeps the
 * cookies the server sets, sends `Origin` on state-changing requests, and reads
 * the CSRF token from a page (the hidden `_csrf` field) before posting a form.
 */
export class AppClient {
  private cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (!value || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async get(pathname: string, headers: Record<string, string> = {}): Promise<Response> {
    const res = await fetch(this.baseUrl + pathname, { headers: { Cookie: this.cookieHeader(), ...headers }, redirect: "manual" });
    this.remember(res);
    return res;
  }

  /** The CSRF token the page at `pathname` renders into its forms. */
  async csrfToken(pathname = "/login"): Promise<string> {
    const html = await (await this.get(pathname)).text();
    const m = /name="_csrf" value="([^"]+)"/.exec(html) ?? /"csrf":"([^"]+)"/.exec(html);
    if (!m) throw new Error(`no CSRF token on ${pathname}`);
    return m[1];
  }

  /** Posts a urlencoded form the way a page of the app would (token from `tokenFrom`, own Origin). */
  async postForm(pathname: string, form: Record<string, string>, opts: { tokenFrom?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const token = await this.csrfToken(opts.tokenFrom ?? pathname.split("?")[0]);
    const res = await fetch(this.baseUrl + pathname, {
      method: "POST",
      redirect: "manual",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Cookie: this.cookieHeader(),
        Origin: this.baseUrl,
        ...opts.headers,
      },
      body: new URLSearchParams({ _csrf: token, ...form }),
    });
    this.remember(res);
    return res;
  }

  /** Signs in through the real /login form; throws unless the server redirects. */
  async signIn(email: string, password: string): Promise<void> {
    const res = await this.postForm("/login", { email, password });
    if (res.status !== 302) throw new Error(`sign-in failed for ${email}: ${res.status}`);
  }
}
