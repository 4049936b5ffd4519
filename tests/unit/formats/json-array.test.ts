/**
 * readJsonArray streams the elements of a top-level JSON array. Reference: JSON.parse of the
 * whole document (ECMA-404 as V8 implements it) — every element must come out exactly as
 * JSON.parse gives it, wherever the 1 MB read chunks cut strings, escapes and brackets.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readJsonArray } from "../../../app/formats/source.server";
import type { Problem } from "../../../app/formats/problems";
import { seededRandom } from "../../../app/stats";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-json-array-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const CHUNK = 1 << 20;

async function read(text: string | Buffer, stopAfter?: number) {
  const file = path.join(dir, `a${n++}.json`);
  fs.writeFileSync(file, text);
  const values: unknown[] = [];
  const problems: Problem[] = [];
  const count = await readJsonArray(
    file,
    {
      element: (v, i) => {
        expect(i).toBe(values.length + problems.length + 1);
        values.push(v);
        return stopAfter === undefined || values.length < stopAfter;
      },
      problem: (p) => problems.push(p),
    },
    "not an array",
  );
  return { values, problems, count };
}

/** A random JSON value with the characters a splitter can trip on: quotes, backslashes, brackets and commas in strings, nesting, non-ASCII. */
function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  const pieces = ["\\", '"', "]", "}", "[", "{", ",", ":", " ", "\n", "é", "中", "𝄞", "\u0000", "\\n", "x", "abc"];
  const str = () => Array.from({ length: Math.floor(rand() * 12) }, () => pieces[Math.floor(rand() * pieces.length)]).join("");
  if (depth > 3 || r < 0.3) return [str(), Math.round(rand() * 1e6) / 100, true, false, null][Math.floor(rand() * 5)];
  if (r < 0.65) return Object.fromEntries(Array.from({ length: Math.floor(rand() * 5) }, () => [str(), randomValue(rand, depth + 1)]));
  return Array.from({ length: Math.floor(rand() * 5) }, () => randomValue(rand, depth + 1));
}

describe("readJsonArray", () => {
  it("gives exactly JSON.parse's elements on a 3 MB random document (chunk boundaries fall everywhere)", async () => {
    const rand = seededRandom(18);
    const doc: unknown[] = [];
    let size = 0;
    while (size < 3 * CHUNK) {
      const v =
        rand() < 0.5 ? { id: doc.length, text: "y".repeat(Math.floor(rand() * 4000)), extra: randomValue(rand, 0) } : randomValue(rand, 0);
      doc.push(v);
      size += JSON.stringify(v).length;
    }
    // Pretty-printed (whitespace between tokens) and compact.
    for (const text of [JSON.stringify(doc, null, 1), JSON.stringify(doc)]) {
      const { values, problems, count } = await read(text);
      expect(problems).toEqual([]);
      expect(count).toBe(doc.length);
      expect(values).toEqual(JSON.parse(text));
    }
  });

  it("an escape, a quote or a comma at the very end of a chunk", async () => {
    for (const [tail, cut] of [
      ['\\"', 0], // the backslash is the chunk's last character
      ["\\\\", 0],
      ["", 1], // the closing quote starts the next chunk
    ] as const) {
      const head = '[{"a":"';
      const pad = "p".repeat(CHUNK - head.length - 1 + cut);
      const text = `${head}${pad}${tail}q"},{"b":[1,"]"]}]`;
      const { values, problems } = await read(text);
      expect(problems).toEqual([]);
      expect(values).toEqual(JSON.parse(text));
    }
    const commaAtEnd = `[${"1".repeat(CHUNK - 2)},2]`;
    expect((await read(commaAtEnd)).values).toEqual(JSON.parse(commaAtEnd));
  });

  it("a malformed record is a problem of its number, without quoting it; the others are read", async () => {
    const { values, problems, count } = await read('[{"a": 1}, {"key": "sk-live-SECRET123", oops}, {"c": 3}]');
    expect(values).toEqual([{ a: 1 }, { c: 3 }]);
    expect(count).toBe(3);
    expect(problems).toHaveLength(1);
    expect(problems[0].row).toBe(2);
    expect(problems[0].message).toMatch(/^not valid JSON/);
    expect(problems[0].message).not.toContain("SECRET");
  });

  it("an empty array, primitives, and stopping early", async () => {
    expect(await read("  [ ]  \n")).toEqual({ values: [], problems: [], count: 0 });
    expect((await read('[1, "two", null, [3], {"four": 4}]')).values).toEqual([1, "two", null, [3], { four: 4 }]);
    expect((await read("[1, 2, 3, 4]", 2)).values).toEqual([1, 2]);
  });

  it.each([
    ['{"a": [1, 2]}', "not an array"],
    ['[{"a": 1}, {"b": 2}', /record 2: the file ends inside the array/],
    ['[{"a": "unterminated}]', /record 1: the file ends inside the array/],
    ["[1, 2,]", /record 3: a comma after the last record|record 2: a comma after the last record/],
    ["[1,,2]", /record 2: an empty record/],
    ['[{"a": 1]}]', /record 1: a "\]" closes a "\{"/],
    ["[1] [2]", /text after its closing \]/],
  ])("refuses %s", async (text, message) => {
    await expect(read(text)).rejects.toThrow(message);
  });
});
