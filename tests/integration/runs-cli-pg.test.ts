/**
 * The run and provider commands on PostgreSQL (issue 17), as an operator types them — real child processes on a
 * throw-away PostgreSQL cluster and, for the reference, on a SQLite file, against the local fake
 * OpenAI-compatible endpoint:
 *
 *   npm run import    -- --preset refinebench --project cli FILE      (the released RefineBench layout)
 *   npm run providers -- add --project cli … --api-key-env KEYVAR     (the key stored encrypted)
 *   npm run providers -- test --project cli --name target             (one call through the shared limits)
 *   npm run runs      -- start --project cli --config run.json        (created, then drained in that process)
 *   npm run runs      -- start … --detach; status; pause; resume; cancel
 *
 * The run drained on PostgreSQL has the jobs, responses, verdicts and results of the same commands on SQLite
 * (the PostgreSQL database copied back to SQLite with db:copy's copyDatabase and read by the same reader), every
 * request reached the endpoint with the key the operator gave, and a definition naming a provider that does not
 * exist is refused with the field named and no run written.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { openDatabase } from "../../db/client";
import { copyDatabase } from "../../db/copy";
import { runScript } from "../support/cli";
import { tempDir } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";
import { guidedJudgeReply, messagesOf, runFigures, writeRefineBench } from "./runs-protocol-support";

const NO_PG = pgSkipReason();
const KEY = "sk-cli-on-pg-SECRET-7070";
/** 32 bytes as 64 hex digits: what encrypts the providers' keys at rest on both databases here. */
const ENCRYPTION_KEY = "7".repeat(64);
const ITEMS = 6;
const MAX_TURNS = 2;
const dir = tempDir("concord-runs-cli-pg-");
let testPg: TestPg | undefined;
let fake: FakeLlm;
let url = "";
let client: pg.Client | undefined;

/** The target answers "Answer vN" on turn N; the judge says Yes to checklist item q on turn t when codeSum(q) mod 3 < t. */
function script(req: { body: Record<string, unknown> }) {
  const msgs = messagesOf(req.body);
  const last = msgs[msgs.length - 1]?.content ?? "";
  if (req.body.model === "target-model") {
    if (last.includes("single word: ready")) return { text: "ready", usage: { prompt_tokens: 9, completion_tokens: 1 } };
    return `Answer v${msgs.filter((m) => m.role === "user").length}`;
  }
  return guidedJudgeReply(last);
}

const cli = (script: string, args: string[], databaseUrl: string, env: Record<string, string> = {}) =>
  runScript(script, args, { DATABASE_URL: databaseUrl, CONCORD_ENCRYPTION_KEY: ENCRYPTION_KEY, OPERATOR_KEY: KEY, ...env });

const definition = (name: string) => ({
  name,
  protocol: "refinebench",
  datasetId: 1,
  models: [{ provider: "target" }],
  judges: [{ provider: "judge" }],
  settings: { setting: "guided", maxTurns: MAX_TURNS },
});

/** The same commands on either database: import, two providers, a test call, and a run drained by `runs start`. */
async function operate(databaseUrl: string) {
  const imported = await cli("import", ["--preset", "refinebench", "--project", "cli", path.join(dir, "refinebench.json")], databaseUrl);
  expect(imported.code, imported.err).toBe(0);
  for (const [name, model] of [
    ["target", "target-model"],
    ["judge", "judge-model"],
  ]) {
    const add = await cli(
      "providers",
      [
        "add",
        "--project",
        "cli",
        "--name",
        name,
        "--base-url",
        fake.baseUrl,
        "--model",
        model,
        "--api-key-env",
        "OPERATOR_KEY",
        "--concurrency",
        "4",
      ],
      databaseUrl,
    );
    expect(add.code, add.err).toBe(0);
  }
  const test = await cli("providers", ["test", "--project", "cli", "--name", "target"], databaseUrl);
  expect(test.code, test.err).toBe(0);
  const config = path.join(dir, "run.json");
  fs.writeFileSync(config, JSON.stringify(definition("guided from the command line")));
  const start = await cli("runs", ["start", "--project", "cli", "--config", config], databaseUrl, { WORKER_CONCURRENCY: "8" });
  expect(start.code, start.err).toBe(0);
  return { test, start };
}

afterAll(async () => {
  await client?.end();
  await fake?.close();
  testPg?.stop();
});

describe.skipIf(NO_PG)("npm run runs and npm run providers on PostgreSQL", () => {
  let reference: Awaited<ReturnType<typeof runFigures>>;
  let onPg: Awaited<ReturnType<typeof operate>>;

  beforeAll(async () => {
    fake = await startFakeLlm(script);
    writeRefineBench(path.join(dir, "refinebench.json"), ITEMS);
    testPg = await startTestPg();
    url = await testPg.createDatabase("runs_cli");
    // The reference: the same commands on a SQLite file.
    const file = path.join(dir, "reference.db");
    await operate(file);
    const db = openDatabase(file);
    reference = await runFigures(db, 1);
    db.$client.close();
    fake.requests.length = 0;
    onPg = await operate(url);
    client = new pg.Client({ connectionString: url });
    await client.connect();
  }, 240_000);

  it("providers test makes one call through the shared limits, with the operator's key, and leaves its row done", async () => {
    expect(onPg.test.out).toMatch(/^provider target \(target-model\): \d+ ms, 1 attempt, tokens 9\+1\nreply: "ready"\n$/);
    const calls = (await client!.query(`SELECT state, owner, prompt_tokens, completion_tokens FROM provider_calls WHERE job_id IS NULL`))
      .rows;
    expect(calls).toEqual([{ state: "done", owner: expect.stringMatching(/^cli-\d+$/), prompt_tokens: 9, completion_tokens: 1 }]);
    // No worker row of the test command is left behind.
    expect((await client!.query(`SELECT id FROM workers WHERE id LIKE 'cli-%'`)).rows).toEqual([]);
    // Every request of this database's commands carried the key given at `providers add` (decrypted with CONCORD_ENCRYPTION_KEY).
    expect(fake.requests.length).toBeGreaterThan(1);
    expect(new Set(fake.requests.map((r) => r.authorization))).toEqual(new Set([`Bearer ${KEY}`]));
    // The key is stored encrypted, never as given.
    const keys = (await client!.query(`SELECT api_key FROM providers`)).rows.map((r: { api_key: string }) => r.api_key);
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(k).not.toContain(KEY);
  });

  it("runs start creates the run and drains it in that process: the same jobs, responses, verdicts and results as on SQLite", async () => {
    expect(onPg.start.out).toMatch(/^run 1 created with \d+ initial jobs\n/);
    expect(onPg.start.out).toMatch(/run 1 completed: \d+ done, 0 failed, 0 remaining/);
    const back = path.join(dir, "back.db");
    const checks = await copyDatabase({ kind: "postgres", url }, { kind: "sqlite", file: back });
    expect(checks.every((c) => c.same)).toBe(true);
    const db = openDatabase(back);
    try {
      const figures = await runFigures(db, 1);
      expect(figures.status).toBe("completed");
      expect(figures).toEqual(reference);
      // Guided RefineBench, 2 turns: every item answered on turn 1, and judged on each turn it was answered.
      expect(figures.responses.filter((r) => (r as { turn: number }).turn === 1)).toHaveLength(ITEMS);
    } finally {
      db.$client.close();
    }
  });

  it("start --detach queues a run for the workers; status, pause, resume and cancel answer from PostgreSQL", async () => {
    const config = path.join(dir, "detached.json");
    fs.writeFileSync(config, JSON.stringify(definition("queued for workers")));
    const start = await cli("runs", ["start", "--project", "cli", "--config", config, "--detach"], url);
    expect(start.code, start.err).toBe(0);
    const id = Number(/^run (\d+) created with (\d+) initial jobs\n$/.exec(start.out)![1]);
    const queued = await cli("runs", ["status", String(id)], url);
    expect(queued.out).toMatch(new RegExp(`^run ${id} queued: 0 done, 0 failed, \\d+ remaining`));
    expect((await cli("runs", ["pause", String(id)], url)).out).toBe(`run ${id}: paused\n`);
    expect((await cli("runs", ["resume", String(id)], url)).out).toBe(`run ${id}: queued\n`);
    expect((await cli("runs", ["cancel", String(id)], url)).out).toBe(`run ${id}: cancelled\n`);
    const again = await cli("runs", ["resume", String(id)], url);
    expect(again.code).toBe(1);
    expect(again.err).toBe("runs: cannot resume a cancelled run\n");
    const { rows } = await client!.query(`SELECT status FROM runs WHERE id = $1`, [id]);
    expect(rows).toEqual([{ status: "cancelled" }]);
  });

  it("a definition naming a provider the project does not have is refused, naming the field; no run is written", async () => {
    const before = (await client!.query(`SELECT COUNT(*)::int AS n FROM runs`)).rows[0].n as number;
    const config = path.join(dir, "bad.json");
    fs.writeFileSync(config, JSON.stringify({ ...definition("bad"), models: [{ provider: "nope" }] }));
    const start = await cli("runs", ["start", "--project", "cli", "--config", config], url);
    expect(start.code).toBe(1);
    expect(start.err).toBe(`runs: ${config}: models[0].provider: no provider named "nope" in this project\n`);
    expect((await client!.query(`SELECT COUNT(*)::int AS n FROM runs`)).rows[0].n).toBe(before);
  });
});
