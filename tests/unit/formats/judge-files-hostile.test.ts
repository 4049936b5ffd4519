/**
 * Hostile input to the judge-agreement file reader: a broken JSON line or document that
 * holds a secret-looking string. The message names the file, row and reason, and never
 * echoes the file's text (V8's JSON.parse message would quote it).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readTable } from "../../../app/formats/judgeFiles.server";

const ROOT = path.resolve(__dirname, "../../..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-judge-files-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const SECRET = "sk-live-7c1e9a4b2d8f6e30";

async function message(name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  try {
    await readTable(file, "LABELS");
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the file was read");
}

describe("judge files: broken JSON is reported without its content", () => {
  it.each([
    [
      "unquoted token",
      "labels.jsonl",
      `{"unit": "u1", "annotator": "a", "label": "x"}\n{"unit": "u2", "annotator": "a", "label": ${SECRET}}\n`,
      /^LABELS labels\.jsonl: row 2: not valid JSON/,
    ],
    [
      "cut-off line",
      "cut.jsonl",
      `{"unit": "u1", "annotator": "a", "label": "x"}\n{"unit": "u2", "token": "${SECRET}`,
      /^LABELS cut\.jsonl: row 2: the JSON on this line is cut off before it ends$/,
    ],
    ["bad key", "keys.jsonl", `{"unit": "u1", ${SECRET}: 1}\n`, /^LABELS keys\.jsonl: row 1: not valid JSON/],
    [
      "a JSON document",
      "labels.json",
      `[\n {"unit": "u1", "annotator": "a", "label": "x"},\n {"unit": "u2", "password": ${SECRET}}\n]`,
      /^LABELS labels\.json: not valid JSON/,
    ],
    [
      "a cut-off JSON document",
      "cut.json",
      `[{"unit": "u1", "annotator": "a", "label": "${SECRET}`,
      /^LABELS cut\.json: the JSON is cut off before it ends( \(line 1\))?\.$/,
    ],
  ])("%s", async (_what, name, text, expected) => {
    const m = await message(name, text);
    expect(m).toMatch(expected);
    expect(m).not.toContain(SECRET);
    expect(m).not.toContain("sk-live");
  });

  it("the command prints one line without the secret, exit 2", () => {
    const labels = path.join(dir, "cli-labels.jsonl");
    const verdicts = path.join(dir, "cli-verdicts.csv");
    fs.writeFileSync(labels, `{"unit": "u1", "annotator": "a", "label": "A"}\n{"unit": "u1", "annotator": "b", "label": ${SECRET}}\n`);
    fs.writeFileSync(verdicts, "unit,judge,verdict\nu1,j,A\n");
    const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/judge-agreement.ts", "--labels", labels, "--verdicts", verdicts], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^judge-agreement: LABELS cli-labels\.jsonl: row 2: not valid JSON/);
    expect(r.stderr).not.toContain(SECRET);
  });
});
