import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { databasePathFromEnv, stateDirFor } from "../db/client";
import { parseEgressAllow } from "./runs/providers/egress.server";

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: z.string().default("data/concord.db"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Secret for signing session cookies. Required in production. */
  SESSION_SECRET: z.string().min(16).optional(),
  /** Set to "1" to mark the session cookie Secure (serve over HTTPS). */
  COOKIE_SECURE: z.enum(["0", "1"]).default("0"),
  /**
   * Heavy reads (exports, report pages and their CSV/LaTeX downloads, the judges, disagreements and run results
   * pages) one account may have in progress at once; one more is answered 429 (app/request-limits.server.ts).
   */
  CONCORD_HEAVY_READS_PER_USER: z.coerce.number().int().min(1).max(1000).default(4),
  /**
   * Requests one API token may make per minute (a token bucket holding this many, refilled evenly over the
   * minute, per server process); one more is answered 429 with Retry-After (app/api/rate-limit.server.ts).
   */
  CONCORD_API_RATE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(600),
  /** "external" turns off the web server's in-process run worker (run `npm run worker`). */
  CONCORD_WORKER: z.enum(["in-process", "external"]).default("in-process"),
  /** Run worker settings: jobs in flight, jobs claimed ahead, lease and poll intervals, call-log detail. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(16),
  WORKER_PREFETCH: z.coerce.number().int().min(0).max(4096).optional(),
  WORKER_LEASE_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60_000),
  WORKER_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  WORKER_CALL_LOG: z.enum(["full", "compact"]).default("full"),
  WORKER_PG_POOL: z.coerce.number().int().min(1).max(100).default(4),
  /**
   * Seconds between a webhook delivery's failed attempt and the next one, comma-separated, one per retry; after
   * the last, the delivery is marked failed (app/webhooks/sender.server.ts). Default 10 s, 1 min, 5 min, 30 min,
   * 2 h, 6 h: 7 attempts over about 8.6 hours.
   */
  CONCORD_WEBHOOK_BACKOFF_SECONDS: z
    .string()
    .regex(/^\s*\d{1,6}\s*(,\s*\d{1,6}\s*){0,19}$/, "1 to 20 whole numbers of seconds, comma-separated (e.g. 10,60,300)")
    .default("10,60,300,1800,7200,21600")
    .transform((s) => s.split(",").map((x) => Math.min(Number(x.trim()), 86_400))),
  /**
   * Hosts, IP addresses and CIDR blocks (comma-separated) that provider requests may reach besides global
   * addresses: loopback, private, link-local and other non-global addresses are refused unless listed here
   * (app/runs/providers/egress.server.ts). E.g. "127.0.0.1,::1" for a vLLM on this machine.
   */
  CONCORD_EGRESS_ALLOW: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      try {
        parseEgressAllow(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    }),
});

export type Env = z.infer<typeof EnvSchema>;

let cached: Env | undefined;

/** Validated environment; throws a one-line message naming the bad variable. */
export function env(): Env {
  if (cached) return cached;
  const parsed = EnvSchema.safeParse(process.env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid environment variable ${issue.path.join(".")}: ${issue.message}`);
  }
  cached = parsed.data;
  return cached;
}

let generated: string | undefined;

/**
 * The secret that signs session cookies: SESSION_SECRET when set; otherwise a
 * random secret kept in a file beside the database (CONCORD_STATE_DIR on
 * PostgreSQL; created once, mode 0600),
 * so no two installations share a default and sessions survive a restart.
 */
export function sessionSecret(): string {
  const e = env();
  if (e.SESSION_SECRET) return e.SESSION_SECRET;
  if (generated) return generated;
  const dbFile = databasePathFromEnv();
  if (dbFile === ":memory:") return (generated = randomBytes(32).toString("hex"));
  const file = path.join(stateDirFor(dbFile), "concord-session-secret");
  try {
    generated = fs.readFileSync(file, "utf8").trim();
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      fs.writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    generated = fs.readFileSync(file, "utf8").trim();
  }
  if (generated.length < 32) throw new Error(`Session secret file ${file} is too short; delete it to make a new one.`);
  return generated;
}
