/**
 * Starts the real production server (scripts/server.ts on the Remix build in
 * build/, made once by tests/support/global-setup.ts) on a free port with its
 * own temporary database.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { tempDir } from "./db";
import { SERVER_NODE_FLAGS } from "../../scripts/server-flags";

export const ROOT = path.resolve(__dirname, "../..");

export type RunningApp = {
  url: string;
  /** The server's process id (to read its memory use, or signal it). */
  pid: number;
  databaseFile: string;
  stop: () => Promise<void>;
  /** Everything the server printed, for debugging a failed test. */
  output: () => string;
};

/** Extra settings for startApp: environment variables (undefined removes one) and node flags. */
export type StartOptions = {
  env?: Record<string, string | undefined> | ((databaseFile: string) => Record<string, string | undefined>);
  nodeArgs?: string[];
};

/**
 * @param prepare runs before the server starts, with the database file path
 *   (for example to seed it with seedDemo(openDatabase(file))).
 * @param options extra environment (e.g. TRUST_PROXY) and node flags (e.g. a
 *   test-only --import preload) for the server process.
 */
export async function startApp(prepare?: (databaseFile: string) => Promise<void> | void, options: StartOptions = {}): Promise<RunningApp> {
  const dir = tempDir("concord-app-");
  const databaseFile = path.join(dir, "app.db");
  if (prepare) await prepare(databaseFile);
  const extraEnv = typeof options.env === "function" ? options.env(databaseFile) : (options.env ?? {});
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseFile, PORT: "0", NODE_ENV: "production", ...extraEnv };
  for (const [k, v] of Object.entries(extraEnv)) if (v === undefined) delete env[k];
  const child: ChildProcess = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...(options.nodeArgs ?? []), "scripts/cli.mjs", "server"], {
    cwd: ROOT,
    env,
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
    pid: child.pid!,
    databaseFile,
    output: () => out,
    stop: async () => {
      // A server killed by a signal (a test's kill -9) has no exit code, only its signal.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A response read by AppClient. */
export type AppResponse = { status: number; headers: http.IncomingHttpHeaders; text: string };

/**
 * An HTTP client for the running app that behaves like a browser: it keeps the
 * cookies the server sets, sends `Origin` on state-changing requests, and reads
 * the CSRF token from a page (the hidden `_csrf` field) before posting a form.
 * `localAddress` picks the loopback address it connects from (127.0.0.2, ...),
 * so tests can act as different clients.
 */
export class AppClient {
  private cookies = new Map<string, string>();
  constructor(
    readonly baseUrl: string,
    readonly opts: { localAddress?: string } = {},
  ) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private remember(setCookie: string[] | undefined) {
    for (const line of setCookie ?? []) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (!value || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** One request; cookies are sent and remembered; redirects are not followed. */
  request(method: string, pathname: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<AppResponse> {
    const url = new URL(this.baseUrl + pathname);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname === "localhost" ? "127.0.0.1" : url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method,
          localAddress: this.opts.localAddress,
          agent: false,
          headers: {
            Host: url.host,
            ...(this.cookies.size ? { Cookie: this.cookieHeader() } : {}),
            ...(body !== undefined ? { "Content-Length": String(Buffer.byteLength(body)) } : {}),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            this.remember(res.headers["set-cookie"]);
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") });
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  get(pathname: string, headers: Record<string, string> = {}): Promise<AppResponse> {
    return this.request("GET", pathname, headers);
  }

  /** The CSRF token the page at `pathname` renders into its forms. */
  async csrfToken(pathname = "/login"): Promise<string> {
    const { text } = await this.get(pathname);
    const m = /name="_csrf" value="([^"]+)"/.exec(text) ?? /"csrf":"([^"]+)"/.exec(text);
    if (!m) throw new Error(`no CSRF token on ${pathname}`);
    return m[1];
  }

  /**
   * Posts a urlencoded form the way a page of the app would: with the token the
   * page `tokenFrom` (default: the same path) renders, and our own Origin.
   */
  async postForm(
    pathname: string,
    form: Record<string, string>,
    opts: { tokenFrom?: string; token?: string; headers?: Record<string, string> } = {},
  ): Promise<AppResponse> {
    const token = opts.token ?? (await this.csrfToken(opts.tokenFrom ?? pathname.split("?")[0]));
    return this.request(
      "POST",
      pathname,
      { "Content-Type": "application/x-www-form-urlencoded", Origin: this.baseUrl, ...opts.headers },
      new URLSearchParams({ _csrf: token, ...form }).toString(),
    );
  }

  /** Signs in through the real /login form; throws unless the server redirects. */
  async signIn(email: string, password: string): Promise<void> {
    const res = await this.postForm("/login", { email, password });
    if (res.status !== 302) throw new Error(`sign-in failed for ${email}: ${res.status} ${res.text.slice(0, 200)}`);
  }
}
