/**
 * The streaming UTF-8 reader must decode exactly what a fatal TextDecoder
 * decodes (the reference: WHATWG Encoding, as Node implements it), refuse
 * exactly what it refuses, and name the byte and line of the first bad byte.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decodedChunks } from "../../../app/formats/source.server";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-source-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function decode(bytes: Buffer): Promise<string> {
  const file = path.join(dir, `f${n++}.txt`);
  fs.writeFileSync(file, bytes);
  let text = "";
  for await (const chunk of decodedChunks(file)) text += chunk;
  return text;
}

const CHUNK = 1 << 20;

describe("decodedChunks", () => {
  it("decodes multi-byte characters cut by every chunk boundary position, as TextDecoder does", async () => {
    for (const ch of ["é", "€", "𝄞", "中"]) {
      const bytes = Buffer.from(ch, "utf8");
      for (let cut = 1; cut < bytes.length; cut++) {
        const buf = Buffer.concat([Buffer.alloc(CHUNK - cut, 0x61), bytes, Buffer.from("\nend")]);
        expect(await decode(buf)).toBe(new TextDecoder("utf-8", { fatal: true }).decode(buf));
      }
    }
  });

  it("drops a BOM only at the start", async () => {
    expect(await decode(Buffer.from("\uFEFFa,b\n\uFEFF", "utf8"))).toBe("a,b\n\uFEFF");
  });

  it("refuses what a fatal TextDecoder refuses: stray continuation, overlong, surrogate, above U+10FFFF, bad lead", async () => {
    const bad = [
      [0x80],
      [0xc0, 0xaf],
      [0xe0, 0x80, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xf5, 0x80, 0x80, 0x80],
      [0xc3, 0x41],
    ];
    for (const b of bad) {
      const buf = Buffer.concat([Buffer.from("ab\ncd"), Buffer.from(b), Buffer.from("ef\n")]);
      expect(() => new TextDecoder("utf-8", { fatal: true }).decode(buf)).toThrow();
      await expect(decode(buf)).rejects.toThrow(/not UTF-8 text \(byte 0x[0-9A-F]{2} at byte 6, line 2\)/);
    }
  });

  it("names the byte and line of a bad byte in a later chunk", async () => {
    const buf = Buffer.concat([Buffer.from("x\n".repeat(CHUNK / 2 + 10)), Buffer.from([0xe9]), Buffer.from("\n")]);
    await expect(decode(buf)).rejects.toThrow(`not UTF-8 text (byte 0xE9 at byte ${CHUNK + 21}, line ${CHUNK / 2 + 11})`);
  });

  it("refuses a file that ends inside a character", async () => {
    await expect(decode(Buffer.from([0x61, 0xe2, 0x82]))).rejects.toThrow("it ends inside a multi-byte character, byte 3");
  });
});
