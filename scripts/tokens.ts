/**
 * API tokens from the command line, on the database named by DATABASE_URL (the operator's view: every
 * user's tokens), through the same functions as the Settings → API tokens page (app/auth/tokens.server.ts).
 *
 *   npm run tokens -- create --email E --name N --scope read|write [--project SLUG]... [--expires-days D]
 *   npm run tokens -- list [--email E]
 *   npm run tokens -- revoke ID
 *
 * `create` prints the token on stdout and nothing else (so `TOKEN=$(npm run -s tokens -- create …)` keeps it
 * out of the terminal), and a line about it on stderr. Without --project the token covers all of the user's
 * projects, now and later; with one or more, only those (the user must be a member of each). --expires-days:
 * 1 to 365, 90 when not given. The token is shown only this once: only its SHA-256 is stored.
 */
import { parseArgs } from "node:util";
import { eq } from "drizzle-orm";
import { databasePathFromEnv } from "../db/client";
import { first, initDal, type Dal } from "../app/dal.server";
import { env } from "../app/env.server";
import { DomainError } from "../app/errors";
import { normaliseEmail } from "../app/auth/accounts.server";
import { createApiToken, listApiTokens, revokeApiToken, type TokenRow } from "../app/auth/tokens.server";
import { findProjectBySlug } from "../app/projects/projects.server";

const USAGE = [
  "usage: tokens create --email E --name N --scope read|write [--project SLUG]... [--expires-days D]",
  "       tokens list [--email E]",
  "       tokens revoke ID",
].join("\n");
const fail = (msg: string): never => {
  console.error(`tokens: ${msg}`);
  process.exit(1);
};

/** The flag each field of the domain's refusals comes from. */
const FLAGS: Record<string, string> = { name: "--name", scope: "--scope", projects: "--project", expiresDays: "--expires-days" };

const [cmd, ...rest] = process.argv.slice(2);
let values: { email?: string; name?: string; scope?: string; project?: string[]; "expires-days"?: string };
let positionals: string[];
try {
  ({ values, positionals } = parseArgs({
    args: rest,
    options: {
      email: { type: "string" },
      name: { type: "string" },
      scope: { type: "string" },
      project: { type: "string", multiple: true },
      "expires-days": { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  }));
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}

const day = (t: number | null) => (t === null ? "—" : new Date(t * 1000).toISOString().slice(0, 16).replace("T", " "));

async function userByEmail(d: Dal, raw: string) {
  const email = normaliseEmail(raw);
  const user = first(
    await d.q.select({ id: d.t.users.id, email: d.t.users.email }).from(d.t.users).where(eq(d.t.users.email, email)).limit(1),
  );
  return user ?? fail(`--email: no account with the email ${email}`);
}

function describe(t: TokenRow): string {
  const projects = t.projects === null ? "all projects" : t.projects.map((p) => p.slug).join(",") || "(none left)";
  const used = t.lastUsedAt === null ? "never used" : `last used ${day(t.lastUsedAt)} UTC from ${t.lastUsedFrom ?? "?"}`;
  return [
    t.id,
    t.status,
    t.owner.email,
    t.name,
    `${t.prefix}…`,
    t.scope,
    projects,
    `created ${day(t.createdAt)} UTC`,
    `expires ${day(t.expiresAt)} UTC`,
    used,
  ].join("\t");
}

async function main() {
  if (!["create", "list", "revoke"].includes(cmd ?? "")) fail(USAGE);
  try {
    env();
  } catch (err) {
    fail((err as Error).message);
  }
  const d = await initDal(databasePathFromEnv());

  if (cmd === "create") {
    if (positionals.length) fail(`unexpected argument ${positionals[0]}\n${USAGE}`);
    const user = await userByEmail(d, values.email ?? fail("--email E is required"));
    const name = values.name ?? fail("--name N is required");
    const scope = values.scope ?? fail("--scope read|write is required");
    const projectIds: number[] = [];
    for (const slug of values.project ?? []) {
      const project = await findProjectBySlug(slug.trim().toLowerCase(), d);
      projectIds.push(project ? project.id : fail(`--project ${slug}: no such project`));
    }
    try {
      const made = await createApiToken(
        user.id,
        {
          name,
          scope: scope as "read" | "write",
          projects: projectIds.length ? projectIds : "all",
          expiresDays: values["expires-days"] as unknown as number | undefined,
        },
        d,
      );
      process.stdout.write(`${made.token}\n`);
      const covers = projectIds.length ? (values.project ?? []).join(", ") : "all projects";
      console.error(
        `tokens: token ${made.id} "${made.name}" for ${user.email} (${made.scope}, ${covers}), expires ${day(made.expiresAt)} UTC. ` +
          "It is shown only this once.",
      );
    } catch (err) {
      if (err instanceof DomainError) fail(err.field && FLAGS[err.field] ? `${FLAGS[err.field]}: ${err.message}` : err.message);
      throw err;
    }
    return;
  }

  if (cmd === "list") {
    if (positionals.length) fail(`unexpected argument ${positionals[0]}\n${USAGE}`);
    const owner = values.email === undefined ? undefined : (await userByEmail(d, values.email)).id;
    const rows = await listApiTokens(owner === undefined ? {} : { ownerId: owner }, d);
    if (rows.length === 0) console.log("no tokens");
    for (const t of rows) console.log(describe(t));
    return;
  }

  // revoke ID
  if (positionals.length !== 1 || !/^\d{1,15}$/.test(positionals[0]))
    fail(`revoke takes one token id (a number, as tokens list shows)\n${USAGE}`);
  const id = Number(positionals[0]);
  try {
    const { alreadyRevoked } = await revokeApiToken("operator", id, d);
    console.log(alreadyRevoked ? `token ${id} was already revoked` : `token ${id} revoked`);
  } catch (err) {
    if (err instanceof DomainError) fail(`no token with id ${id}`);
    throw err;
  }
}

main().then(
  () => process.exit(0),
  (err) => fail((err as Error).message),
);
