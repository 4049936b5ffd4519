import { z } from "zod";

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: z.string().default("data/concord.db"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Secret for signing session cookies. Required in production. */
  SESSION_SECRET: z.string().min(16).optional(),
  /** Set to "1" to mark the session cookie Secure (serve over HTTPS). */
  COOKIE_SECURE: z.enum(["0", "1"]).default("0"),
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

const DEV_SECRET = "concord-development-secret-change-me";

export function sessionSecret(): string {
  const e = env();
  if (e.SESSION_SECRET) return e.SESSION_SECRET;
  return DEV_SECRET;
}
