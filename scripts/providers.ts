/**
 * Providers from the command line, on the database named by DATABASE_URL.
 *
 *   npm run providers -- add --project SLUG --name NAME --base-url URL --model MODEL
 *                            [--api-key-env VAR] [--concurrency N] [--rpm N] [--settings FILE]
 *                            [--kind replay --recording NAME]
 *   npm run providers -- list --project SLUG
 *   npm run providers -- test --project SLUG --name NAME     (one tiny request: latency and reply)
 *   npm run providers -- remove --project SLUG --name NAME
 *
 * `test` reaches only addresses CONCORD_EGRESS_ALLOW allows (app/runs/providers/egress.server.ts), and
 * prints at most 200 characters of an upstream error, the key masked.
 *
 * The API key is read from the environment variable named by --api-key-env
 * (never from the command line, which shells keep in their history) and
 * stored encrypted. --settings is a JSON file checked strictly: an unknown
 * key is an error naming it.
 */
import { parseArgs } from "node:util";
import { eq } from "drizzle-orm";
import { databasePathFromEnv, openDatabase } from "../db/client";
import { isPostgresUrl, openPgDatabase } from "../db/client-pg";
import { closeDal, first, initDal } from "../app/dal.server";
import { env } from "../app/env.server";
import { readJsonFile } from "../app/files.server";
import { providerFromRow } from "../app/runs/providers/index.server";
import { heartbeat, oneOffLimits, sharedLimits, unregisterWorker } from "../app/runs/providers/shared-limits.server";
import { PgAdmissionLine } from "../app/runs/pg/admission-line.server";
import { endCallPg } from "../app/runs/pg/queue.server";
import { PgCallGate } from "../app/runs/pg/worker.server";
import { heartbeatPg, unregisterWorkerPg } from "../app/runs/pg/workers.server";
import { addProvider, listProviders, ProviderInputError, removeProvider } from "../app/runs/providers/store.server";

const [cmd, ...rest] = process.argv.slice(2);
const fail = (msg: string): never => {
  console.error(`providers: ${msg}`);
  process.exit(1);
};
const USAGE = "usage: providers add|list|test|remove --project SLUG [--name NAME …] (see scripts/providers.ts)";

let values: Record<string, string | undefined>;
try {
  values = parseArgs({
    args: rest,
    options: {
      project: { type: "string" },
      name: { type: "string" },
      "base-url": { type: "string" },
      model: { type: "string" },
      "api-key-env": { type: "string" },
      concurrency: { type: "string" },
      rpm: { type: "string" },
      settings: { type: "string" },
      kind: { type: "string" },
      recording: { type: "string" },
    },
    strict: true,
  }).values as Record<string, string | undefined>;
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}

const intArg = (name: string): number | undefined => {
  const v = values[name];
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) fail(`--${name}: a whole number is required, got "${v}"`);
  return Number(v);
};

async function main() {
  if (!["add", "list", "test", "remove"].includes(cmd ?? "")) fail(USAGE);
  // Every setting is checked once at start (app/env.server.ts), CONCORD_EGRESS_ALLOW among them.
  try {
    env();
  } catch (err) {
    fail((err as Error).message);
  }
  const dbFile = databasePathFromEnv();
  const dal = await initDal(dbFile);
  const slug = values.project ?? fail("--project SLUG is required");
  const project = first(await dal.q.select().from(dal.t.projects).where(eq(dal.t.projects.slug, slug))) ?? fail(`no project "${slug}"`);

  if (cmd === "list") {
    const rows = await listProviders(dal, project.id);
    if (rows.length === 0) console.log(`project ${slug}: no providers`);
    for (const p of rows)
      console.log(
        `${p.name}\t${p.kind}\t${p.model}\t${p.kind === "replay" ? `recording ${String(p.settings.file ?? "")}` : p.baseUrl}\tconcurrency ${p.concurrency}\trpm ${p.requestsPerMinute ?? "—"}\tkey ${p.hasKey ? "set (encrypted)" : "—"}`,
      );
    return;
  }
  const name = values.name ?? fail("--name NAME is required");

  if (cmd === "add") {
    let settings: Record<string, unknown> = {};
    if (values.settings) {
      let doc: unknown;
      try {
        doc = readJsonFile(values.settings, { maxBytes: 1024 * 1024, databaseFile: dbFile });
      } catch (err) {
        fail(`--settings: ${(err as Error).message}`);
      }
      if (!doc || typeof doc !== "object" || Array.isArray(doc)) fail(`--settings ${values.settings}: must hold a JSON object`);
      settings = doc as Record<string, unknown>;
    }
    const kind = values.kind ?? "openai-compatible";
    if (kind !== "openai-compatible" && kind !== "replay") fail(`--kind: "openai-compatible" or "replay", got "${kind}"`);
    if (values.recording) settings = { ...settings, file: values.recording };
    let apiKey: string | undefined;
    if (values["api-key-env"]) {
      apiKey = process.env[values["api-key-env"]];
      if (!apiKey) fail(`--api-key-env ${values["api-key-env"]}: that environment variable is empty or not set`);
    }
    try {
      const row = await addProvider(dal, project.id, {
        name,
        kind: kind as "openai-compatible" | "replay",
        baseUrl: values["base-url"],
        apiKey,
        model: values.model ?? fail("--model MODEL is required"),
        concurrency: intArg("concurrency") ?? 4,
        requestsPerMinute: intArg("rpm") ?? null,
        settings,
      });
      console.log(`provider ${row.name} added to ${slug} (id ${row.id})${apiKey ? "; API key stored encrypted" : ""}`);
    } catch (err) {
      if (err instanceof ProviderInputError) fail(err.message);
      throw err;
    }
    return;
  }

  if (cmd === "remove") {
    try {
      if (!(await removeProvider(dal, project.id, { name }))) fail(`no provider named "${name}" in ${slug}`);
    } catch (err) {
      if (err instanceof ProviderInputError) fail(err.message);
      throw err;
    }
    console.log(`provider ${name} removed from ${slug}`);
    return;
  }

  // test: one tiny request through the provider's shared limits (held across every worker), logged like any call.
  const row =
    (await dal.q.select().from(dal.t.providers).where(eq(dal.t.providers.projectId, project.id))).find((r) => r.name === name) ??
    fail(`no provider named "${name}" in ${slug}`);
  const owner = `cli-${process.pid}`;
  const limits = oneOffLimits(row, owner);
  const request = {
    kind: "chat" as const,
    messages: [{ role: "user" as const, content: "Reply with the single word: ready" }],
    params: { max_tokens: 16 },
  };
  let failure: string | null = null;
  let report: string[] = [];
  type Provider = ReturnType<typeof providerFromRow>;
  const describe = (reply: Awaited<ReturnType<Provider["call"]>>, ms: number) => [
    `provider ${name} (${row.model}): ${Math.round(ms)} ms, ${reply.attempts} attempt${reply.attempts === 1 ? "" : "s"}${reply.promptTokens != null ? `, tokens ${reply.promptTokens}+${reply.completionTokens ?? 0}` : ""}`,
    `reply: ${JSON.stringify(reply.text.length > 500 ? `${reply.text.slice(0, 500)}…` : reply.text)}`,
  ];
  /** The one call, through the provider's limits (`gate`), and its report lines; a failure is kept to print. */
  const timedCall = async (provider: Provider, gate: NonNullable<Parameters<Provider["call"]>[1]>["gate"]) => {
    const t0 = performance.now();
    try {
      const reply = await provider.call(request, { gate });
      report = describe(reply, performance.now() - t0);
    } catch (err) {
      failure = `test of ${name} failed: ${(err as Error).message}`;
    }
  };
  if (isPostgresUrl(dbFile)) {
    // The PostgreSQL worker's gate: admitted against the provider's row like every worker's calls; the key from
    // CONCORD_ENCRYPTION_KEY (a PostgreSQL database has no folder beside it to keep one).
    await closeDal();
    if (row.apiKey && !process.env.CONCORD_ENCRYPTION_KEY)
      fail(`test of ${name}: it has an API key; set CONCORD_ENCRYPTION_KEY to the key that encrypted it`);
    const pg = await openPgDatabase(dbFile, { max: 2 });
    const pending = new Set<Promise<void>>();
    await heartbeatPg(pg, owner, 60_000);
    let gate: PgCallGate | undefined;
    try {
      const provider = providerFromRow(row as unknown as Parameters<typeof providerFromRow>[0], "");
      gate =
        row.kind === "replay"
          ? undefined
          : new PgCallGate(pg, {
              ...limits,
              callLog: "full",
              pending,
              line: new PgAdmissionLine(),
            });
      await timedCall(provider, gate);
    } catch (err) {
      failure = `test of ${name} failed: ${(err as Error).message}`;
    } finally {
      // The answered call's row is completed (its slot freed) before this process exits.
      const answered = gate?.takeAnswered();
      if (answered) await endCallPg(pg, answered.id, answered.o).catch(() => {});
      await Promise.allSettled([...pending]);
      await unregisterWorkerPg(pg, owner).catch(() => {});
      await pg.$client.end();
    }
  } else {
    await closeDal();
    const db = openDatabase(dbFile);
    heartbeat(db, owner, 60_000);
    try {
      const provider = providerFromRow(row, dbFile);
      const gate = row.kind === "replay" ? undefined : sharedLimits(db).gate(limits);
      await timedCall(provider, gate);
    } catch (err) {
      failure = `test of ${name} failed: ${(err as Error).message}`;
    } finally {
      sharedLimits(db).flushEnds(); // the call's row is completed before this process exits
      unregisterWorker(db, owner);
    }
  }
  if (failure) fail(failure);
  for (const line of report) console.log(line);
}

main().then(
  () => process.exit(0),
  (err) => fail((err as Error).message),
);
