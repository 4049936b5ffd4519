/**
 * Issue 18, critical 1, against the real production server.
 *
 * The attack: a researcher makes a `replay` provider whose `settings.file`
 * names a file on the server (/etc/passwd; the database by its absolute path,
 * a relative path, a "../" path, a symbolic or hard link to it, its WAL). The
 * old provider read whatever it was given with readFileSync and quoted the
 * start of the file in its parse error.
 *
 * The data loss: reading the database file opens and closes a second
 * descriptor on it, and closing ANY descriptor drops the process's POSIX
 * locks, SQLite's included. The next process that opens and closes the
 * database (an export, a worker, a backup) then believes it is the last
 * connection, checkpoints and deletes the WAL under the live server, and every
 * later acknowledged write goes into a deleted file.
 *
 * Whether that loss shows depends on when the read happens (on this machine,
 * with a read put back into validateRecordingName on purpose, it showed after
 * the reads of the provider form's requests — 0 of the 25 submits below on
 * disk — but not after reads inside the worker's jobs), so this test does not
 * rely on it alone. The server runs with a test-only
 * preload (tests/support/fs-watch.mjs) that logs every node:fs call opening
 * the database or its -wal/-shm/-journal companions (compared by real path
 * and by inode). better-sqlite3 opens the database natively, not through
 * node:fs, so the connection itself is never logged: one logged line is a
 * second descriptor, the bug. A control recording that the provider does
 * read shows the watch sees the provider's reads. With the read put back as
 * above (the old provider's readFileSync of `settings.file`, its errors
 * swallowed so every message check still passes), the log names the database
 * and its WAL and the form test fails on the watch alone.
 *
 * Then the reproduction the issue asks for: after those replay jobs ran, a
 * second process opens and closes the database, an annotator submits 25 labels
 * through the annotate page over HTTP, and a third process, while the server
 * still runs, finds all 25 on disk.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { createRun } from "../../app/runs/runner.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, ROOT, startApp, type RunningApp } from "../support/app-server";
import { tempDir } from "../support/db";
import { makeRunsFixture } from "../unit/runs/fixtures";

const EMAIL = "researcher@replay.test";
const PASSWORD = "replay-attack-2026";
const WATCH = path.join(ROOT, "tests/support/fs-watch.mjs");
const ANNOTATE_ROUTE = "routes/p.$slug.tasks.$taskId.annotate";

/** The content a refusal must never show: /etc/passwd lines, SQLite's header, a shell path. */
const SECRETS = /root:|SQLite format|daemon:|\/bin\/(ba)?sh/;
const PATH_REFUSED = /settings\.file: a recording is chosen by its name in the recordings folder, not by a path/;

let app: RunningApp;
let client: AppClient;
let slug = "";
let runId = 0;
let labSlug = "";
let labTaskId = 0;
let annotatorEmail = "";
let recordings = "";
let watchLog = "";
/** The stored (older version) provider rows: name → settings.file. */
let stored: Record<string, string> = {};

beforeAll(async () => {
  // A recordings folder of our own (CONCORD_RECORDINGS_DIR): a control recording, and links to the database.
  recordings = tempDir("concord-recordings-");
  fs.writeFileSync(
    path.join(recordings, "control.json"),
    JSON.stringify({ recorded: true, description: "control: read by the provider", entries: [] }),
  );
  watchLog = path.join(tempDir("concord-fswatch-"), "fs-watch.log");

  app = await startApp(
    async (file) => {
      const db = openDatabase(file);
      const fx = makeRunsFixture(db, { baseUrl: "http://127.0.0.1:9/v1", items: 2, checklist: 1 });
      slug = fx.project.slug;
      const { id } = await createUser({ email: EMAIL, name: "Researcher", password: PASSWORD }, db);
      await setMembership(fx.project.id, id, "researcher", db);
      // An annotation project beside it, for the 25 submits.
      const lab = await seedAnnotationScenario(db, {
        annotators: 1,
        items: 25,
        overlap: 1,
        password: PASSWORD,
        kinds: ["response-satisfaction"],
      });
      labSlug = lab.slug;
      labTaskId = lab.tasks["response-satisfaction"];
      annotatorEmail = lab.annotators[0].email;

      fs.symlinkSync(file, path.join(recordings, "db-link.json"));
      fs.symlinkSync(`${file}-wal`, path.join(recordings, "wal-link.json"));
      fs.linkSync(file, path.join(recordings, "db-hard.json")); // another name, the same file
      // Rows an older version accepted: replay providers naming the database in every spelling. Their jobs
      // must fail cleanly without the file being opened.
      stored = {
        "old-absolute": file,
        "old-relative": path.relative(ROOT, file),
        "old-dotdot": path.relative(recordings, file),
        "old-dotdot-inside": `${path.dirname(file)}/./missing-folder/../${path.basename(file)}`,
        "old-legacy-prefix": `seeds/recorded/${path.relative(path.join(ROOT, "seeds/recorded"), file)}`,
        "old-wal": `${file}-wal`,
        "old-symlink-path": path.join(recordings, "db-link.json"),
        "old-symlink-name": "db-link.json",
        "old-wal-link-name": "wal-link.json",
        "old-hardlink-name": "db-hard.json",
        "old-passwd": "/etc/passwd",
        control: "control.json",
      };
      for (const [name, f] of Object.entries(stored))
        db.insert(schema.providers)
          .values({ projectId: fx.project.id, name, kind: "replay", model: `model-${name}`, settings: { file: f } })
          .run();
      runId = (
        await createRun(db, fx.project.id, {
          name: "points at files",
          protocol: "refinebench",
          datasetId: fx.dataset.id,
          models: Object.keys(stored).map((provider) => ({ provider })),
          judges: [{ provider: "judge" }],
          settings: { maxTurns: 1 },
        })
      ).id;
      db.$client.close();
    },
    {
      env: {
        CONCORD_RECORDINGS_DIR: recordings,
        CONCORD_FS_WATCH_LOG: watchLog,
        CONCORD_FS_WATCH_EXTRA: JSON.stringify([path.join(recordings, "control.json")]),
        // In NODE_OPTIONS, so processes the server starts (import jobs) are watched too.
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${WATCH}`.trim(),
      },
    },
  );
  client = new AppClient(app.url);
  await client.signIn(EMAIL, PASSWORD);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  if (recordings) fs.rmSync(recordings, { recursive: true, force: true });
  if (watchLog) fs.rmSync(path.dirname(watchLog), { recursive: true, force: true });
});

/** Runs `sql` in a separate process (as an export or a backup would), while the server runs. */
function queryInAnotherProcess(sql: string): unknown[] {
  const code = `import Database from "better-sqlite3"; const db = new Database(${JSON.stringify(app.databaseFile)}); console.log(JSON.stringify(db.prepare(${JSON.stringify(sql)}).raw().all())); db.close();`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as unknown[];
}
const countInAnotherProcess = (sql: string) => Number((queryInAnotherProcess(sql)[0] as number[])[0]);

type WatchLine = {
  pid: number;
  thread: number;
  loaded?: boolean;
  fn?: string;
  path?: string;
  watched?: string | string[];
  stack?: string[];
};
const watchLines = (): WatchLine[] =>
  fs.existsSync(watchLog)
    ? fs
        .readFileSync(watchLog, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as WatchLine)
    : [];
/** Every node:fs open of the database or a companion, by any watched process. */
const databaseOpens = () => watchLines().filter((l) => typeof l.watched === "string" && l.watched.startsWith("database"));

const providerForm = (name: string, fields: Record<string, string>) => ({
  intent: "create",
  name,
  kind: "replay",
  model: "m",
  concurrency: "1",
  requestsPerMinute: "",
  settings: "{}",
  ...fields,
});

describe("replay providers read only named recordings, and never the database", () => {
  it("the watch is active in the server process and watches the database", () => {
    // The main thread's line; tsx's module-hooks thread sometimes logs one of its own.
    const loaded = watchLines().filter((l) => l.loaded && l.pid === app.pid && l.thread === 0);
    expect(loaded, app.output()).toHaveLength(1);
    expect(loaded[0].watched).toEqual(["database", "database-wal", "database-shm", "database-journal", "extra:control.json"]);
  });

  it("refuses a recording given as a path or a link, through the form, with a message that quotes nothing", async () => {
    expect((await client.get(`/p/${slug}/providers`)).status).toBe(200);
    const before = countInAnotherProcess("SELECT COUNT(*) FROM providers");
    const file = app.databaseFile;
    const paths = [
      "/etc/passwd",
      "/proc/self/environ",
      file,
      path.relative(ROOT, file),
      path.relative(recordings, file),
      `${file}-wal`,
      `${file}-shm`,
      path.join(recordings, "db-link.json"),
      "seeds/recorded/../../package.json",
      "control.json/../../../etc/passwd",
    ];
    let i = 0;
    for (const f of paths) {
      for (const fields of [{ settings: JSON.stringify({ file: f }) }, { recording: f }] as Record<string, string>[]) {
        const res = await client.postForm(`/p/${slug}/providers`, providerForm(`evil-${i++}`, fields));
        expect(res.status, f).toBe(400);
        expect(res.text, f).toMatch(PATH_REFUSED);
        expect(res.text, f).not.toMatch(SECRETS);
      }
    }
    // Names that are not regular files of the folder: the symbolic links (to the database and to its WAL).
    // A hard link in the folder is a regular file, but it is the database: refused by what it is (stat only).
    const hard = await client.postForm(`/p/${slug}/providers`, providerForm(`evil-${i++}`, { recording: "db-hard.json" }));
    expect(hard.status).toBe(400);
    expect(hard.text).toMatch(/settings\.file: recording db-hard\.json: is a database file, not a recording/);
    expect(hard.text).not.toMatch(SECRETS);
    for (const name of ["db-link.json", "wal-link.json", "passwd", "app.db"]) {
      const res = await client.postForm(`/p/${slug}/providers`, providerForm(`evil-${i++}`, { recording: name }));
      expect(res.status, name).toBe(400);
      expect(res.text, name).toMatch(new RegExp(`no recording named \\\\"${name.replace(".", "\\.")}\\\\" in the recordings folder`));
      expect(res.text, name).not.toMatch(SECRETS);
    }
    expect(countInAnotherProcess("SELECT COUNT(*) FROM providers")).toBe(before);
    // A recording of the folder, by name, is accepted.
    const ok = await client.postForm(`/p/${slug}/providers`, providerForm("recorded-ok", { recording: "control.json" }));
    expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    expect(ok.text).toMatch(/Provider recorded-ok added/);
    expect(databaseOpens()).toEqual([]);
  });

  it("stored paths (older version) fail their jobs cleanly and never open the database; then a second process opens it, and 25 of 25 submits are on disk", async () => {
    // The runs page starts the server's in-process worker, which runs the jobs of every stored provider.
    expect((await client.get(`/p/${slug}/runs`)).status).toBe(200);
    const jobs = Object.keys(stored).length * 2; // one per provider and item
    await expect
      .poll(() => countInAnotherProcess(`SELECT COUNT(*) FROM jobs WHERE run_id = ${runId} AND status = 'failed'`), {
        timeout: 30_000,
        interval: 250,
      })
      .toBe(jobs);
    const errors = queryInAnotherProcess(
      `SELECT p.name, j.error FROM jobs j JOIN providers p ON p.id = json_extract(j.payload, '$.providerId') WHERE j.run_id = ${runId} ORDER BY p.name`,
    ) as [string, string][];
    expect(errors).toHaveLength(jobs);
    for (const [name, error] of errors) {
      expect(error, name).not.toMatch(SECRETS);
      if (name === "control") expect(error).toMatch(/no recorded output for this request .* in recording control\.json/);
      else if (name === "old-symlink-name" || name === "old-wal-link-name")
        expect(error, name).toMatch(/settings\.file: no recording named "(db|wal)-link\.json" in the recordings folder/);
      else if (name === "old-hardlink-name") expect(error, name).toMatch(/recording db-hard\.json: is a database file, not a recording/);
      else expect(error, name).toMatch(PATH_REFUSED);
    }
    const runPage = await client.get(`/p/${slug}/runs/${runId}`);
    expect(runPage.text).not.toMatch(SECRETS);

    // What the server opened through node:fs: the control recording (so the watch sees the provider's
    // reads), never the database or a companion.
    expect(watchLines().some((l) => l.watched === "extra:control.json" && l.pid === app.pid)).toBe(true);
    expect(databaseOpens()).toEqual([]);

    // A second process opens the database and closes it (what an export, a worker or a backup does).
    const second = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { openDatabase } from "./db/client.ts"; const db = openDatabase(${JSON.stringify(app.databaseFile)}); db.$client.close();`,
      ],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(second.status, second.stderr).toBe(0);

    // 25 labels submitted through the annotate page, each acknowledged by the server.
    const annotator = new AppClient(app.url);
    await annotator.signIn(annotatorEmail, PASSWORD);
    const page = `/p/${labSlug}/tasks/${labTaskId}/annotate`;
    const token = await annotator.csrfToken(page);
    const acknowledged: number[] = [];
    for (let n = 0; n < 25; n++) {
      const res = await annotator.get(`${page}?_data=${encodeURIComponent(ANNOTATE_ROUTE)}`);
      expect(res.status).toBe(200);
      const data = JSON.parse(res.text) as { page: null | { unit: { unitId: number } }; clientToken: string };
      expect(data.page, `unit ${n + 1}`).not.toBeNull();
      const unitId = data.page!.unit.unitId;
      const sent = await annotator.postForm(
        page,
        { intent: "submit", unitId: String(unitId), clientToken: data.clientToken, answer: n % 2 ? "Yes" : "No", durationMs: "1500" },
        { token },
      );
      expect(sent.status, sent.text.slice(0, 200)).toBe(302);
      acknowledged.push(unitId);
    }
    expect(new Set(acknowledged).size).toBe(25);

    // On disk, as a third process sees it while the server still runs: 25 of 25.
    const onDisk = queryInAnotherProcess(
      `SELECT u.id FROM annotations a JOIN assignments s ON s.id = a.assignment_id JOIN units u ON u.id = s.unit_id WHERE u.task_id = ${labTaskId} AND a.status = 'submitted' ORDER BY u.id`,
    ).map((r) => (r as number[])[0]);
    expect(onDisk).toEqual([...acknowledged].sort((a, b) => a - b));
    // Nothing else opened the database meanwhile either.
    expect(databaseOpens()).toEqual([]);
  }, 90_000);
});
