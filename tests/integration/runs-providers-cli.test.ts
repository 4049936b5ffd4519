/**
 * `npm run providers -- add|list|test|remove` as a user runs it (a real child
 * process on a real database file, against the local fake endpoint): settings
 * checked strictly, API keys encrypted at rest (plaintext keys of an older
 * database migrated), a provider error that echoes the key stored masked.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, schema, type Db } from "../../db/client";
import { tempDir } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { runScript } from "../support/cli";

let fake: FakeLlm;
let dir: string;
let file: string;
let db: Db;
const KEY = "sk-live-cli-SECRET-4242";

beforeAll(async () => {
  fake = await startFakeLlm(() => ({ text: "ready", usage: { prompt_tokens: 9, completion_tokens: 1 } }));
  dir = tempDir();
  file = path.join(dir, "cli.db");
  db = openDatabase(file);
  db.insert(schema.projects).values({ slug: "cli", name: "CLI" }).run();
});
afterAll(async () => {
  db?.$client.close();
  await fake?.close();
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  runScript("providers", args, { DATABASE_URL: file, CONCORD_ENCRYPTION_KEY: "", ...env });

const row = (name: string) =>
  db
    .select()
    .from(schema.providers)
    .all()
    .find((p) => p.name === name);

describe("npm run providers", () => {
  it("add stores the key encrypted (key file 0600 beside the database), list never shows it, test sends it and prints latency and reply", async () => {
    const settings = path.join(dir, "settings.json");
    fs.writeFileSync(settings, JSON.stringify({ temperature: 0, max_tokens: 64, pricePerMillionInput: 1 }));
    const add = await cli(
      [
        "add",
        "--project",
        "cli",
        "--name",
        "fake",
        "--base-url",
        fake.baseUrl,
        "--model",
        "tiny",
        "--api-key-env",
        "MY_KEY",
        "--concurrency",
        "3",
        "--rpm",
        "100",
        "--settings",
        settings,
      ],
      { MY_KEY: KEY },
    );
    expect(add.code, add.err).toBe(0);
    expect(add.out).toMatch(/provider fake added to cli .*API key stored encrypted/);
    const stored = row("fake")!;
    expect(stored).toMatchObject({
      concurrency: 3,
      requestsPerMinute: 100,
      model: "tiny",
      settings: { temperature: 0, max_tokens: 64, pricePerMillionInput: 1 },
    });
    expect(stored.apiKey).toMatch(/^enc:v1:/);
    expect(stored.apiKey).not.toContain("SECRET");
    const keyFile = path.join(dir, "concord-encryption-key");
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    // The database file holds no plaintext key anywhere (pages of the file and the WAL).
    // (Read by another process: this one has the database open and must never open its file a second time.)
    db.$client.pragma("wal_checkpoint(TRUNCATE)");
    const scan = spawnSync(
      process.execPath,
      [
        "-e",
        `const fs = require("node:fs"); const f = ${JSON.stringify(file)}; let n = 0; for (const x of [f, f + "-wal"]) if (fs.existsSync(x) && fs.readFileSync(x).includes(${JSON.stringify(KEY)})) n++; console.log(n);`,
      ],
      { encoding: "utf8" },
    );
    expect(scan.stdout.trim()).toBe("0");

    const list = await cli(["list", "--project", "cli"]);
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(/fake\topenai-compatible\ttiny\t.*concurrency 3\trpm 100\tkey set \(encrypted\)/);
    expect(list.out).not.toContain("SECRET");

    fake.requests.length = 0;
    const test = await cli(["test", "--project", "cli", "--name", "fake"]);
    expect(test.code, test.err).toBe(0);
    expect(test.out).toMatch(/provider fake \(tiny\): \d+ ms, 1 attempt, tokens 9\+1/);
    expect(test.out).toMatch(/reply: "ready"/);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].authorization).toBe(`Bearer ${KEY}`); // decrypted for the request only
    expect(fake.requests[0].body).toMatchObject({ model: "tiny", temperature: 0, max_tokens: 16 });
    // The test call was logged (admitted by the shared limits) and completed.
    const calls = db
      .select()
      .from(schema.providerCalls)
      .all()
      .filter((c) => c.providerId === stored.id);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ state: "done", status: 200, promptTokens: 9, completionTokens: 1 });
  }, 60_000);

  it("refuses a mistyped setting, a bad URL and a missing key variable, naming what is wrong; nothing is added", async () => {
    const settings = path.join(dir, "typo.json");
    fs.writeFileSync(settings, JSON.stringify({ temprature: 0.2 }));
    const typo = await cli([
      "add",
      "--project",
      "cli",
      "--name",
      "typo",
      "--base-url",
      fake.baseUrl,
      "--model",
      "m",
      "--settings",
      settings,
    ]);
    expect(typo.code).toBe(1);
    expect(typo.err).toMatch(/settings\.temprature: unknown setting for a openai-compatible provider \(known: .*temperature/);
    const url = await cli(["add", "--project", "cli", "--name", "nourl", "--base-url", "localhost:8000", "--model", "m"]);
    expect(url.code).toBe(1);
    expect(url.err).toMatch(/baseUrl: an http\(s\) URL is required/);
    const key = await cli([
      "add",
      "--project",
      "cli",
      "--name",
      "nokey",
      "--base-url",
      fake.baseUrl,
      "--model",
      "m",
      "--api-key-env",
      "NOT_SET_ANYWHERE",
    ]);
    expect(key.code).toBe(1);
    expect(key.err).toMatch(/--api-key-env NOT_SET_ANYWHERE: that environment variable is empty or not set/);
    // The database is never read as a settings file (and its content never echoed).
    const dbAsSettings = await cli([
      "add",
      "--project",
      "cli",
      "--name",
      "dbset",
      "--base-url",
      fake.baseUrl,
      "--model",
      "m",
      "--settings",
      file,
    ]);
    expect(dbAsSettings.code).toBe(1);
    expect(dbAsSettings.err).toMatch(/is a database file/);
    expect(dbAsSettings.err).not.toMatch(/SQLite format/);
    expect(["typo", "nourl", "nokey", "dbset"].map(row)).toEqual([undefined, undefined, undefined, undefined]);
  }, 60_000);

  it("a plaintext key of an older database is encrypted transparently and still works; an error echoing the key is stored masked", async () => {
    db.insert(schema.providers)
      .values({
        projectId: 1,
        name: "legacy",
        kind: "openai-compatible",
        baseUrl: fake.baseUrl,
        apiKey: KEY,
        model: "old",
        settings: { maxRetries: 0 },
      })
      .run();
    const list = await cli(["list", "--project", "cli"]);
    expect(list.code, list.err).toBe(0);
    expect(row("legacy")!.apiKey).toMatch(/^enc:v1:/);
    // The endpoint answers 401 and quotes the key, as some providers do.
    fake.setScript(() => ({
      status: 401,
      raw: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}`, type: "invalid_request_error" } }),
    }));
    fake.requests.length = 0;
    const test = await cli(["test", "--project", "cli", "--name", "legacy"]);
    expect(fake.requests[0].authorization).toBe(`Bearer ${KEY}`);
    expect(test.code).toBe(1);
    expect(test.err).toMatch(/HTTP 401: .*Incorrect API key provided: sk-…\[key masked\]/);
    expect(test.err).not.toContain(KEY);
    const call = db
      .select()
      .from(schema.providerCalls)
      .all()
      .find((c) => c.providerId === row("legacy")!.id)!;
    expect(call.error).toMatch(/\[key masked\]/);
    expect(JSON.stringify(call)).not.toContain(KEY);
  }, 60_000);

  it("remove deletes the provider", async () => {
    // A provider of this test's own, so it runs alone too.
    db.insert(schema.providers)
      .values({ projectId: 1, name: "retiring", kind: "openai-compatible", baseUrl: fake.baseUrl, apiKey: KEY, model: "old", settings: {} })
      .run();
    expect(row("retiring")).toBeDefined();
    const rm = await cli(["remove", "--project", "cli", "--name", "retiring"]);
    expect(rm.code, rm.err).toBe(0);
    expect(row("retiring")).toBeUndefined();
    const again = await cli(["remove", "--project", "cli", "--name", "retiring"]);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/no provider named "retiring" in cli/);
  }, 60_000);
});
