/**
 * Reading import files without holding them in memory: the bytes stream
 * through a fatal UTF-8 decoder (a BOM is dropped, any other encoding is
 * refused with the byte offset and line), then through papaparse (CSV, quoted
 * newlines and CRLF included) or a line splitter (JSONL). Row numbers are the
 * ones a person sees: CSV rows as a spreadsheet numbers them with the header
 * as row 1, JSONL line numbers, JSON record numbers.
 */
import fs from "node:fs";
import { isUtf8 } from "node:buffer";
import { Readable } from "node:stream";
import Papa from "papaparse";
import { ImportRefusal, jsonSyntaxReason, type Problem } from "./problems";
import { isDatabaseFile } from "../files.server";

export type FileFormat = "csv" | "jsonl" | "json";
export type SourceRecord = Record<string, unknown>;

export function formatFromName(name: string): FileFormat | undefined {
  const lower = name.toLowerCase();
  if (/\.(csv|tsv|txt)$/.test(lower)) return "csv";
  if (/\.(jsonl|ndjson)$/.test(lower)) return "jsonl";
  if (/\.json$/.test(lower)) return "json";
  return undefined;
}

const MAGIC: [number[], string][] = [
  [[0x50, 0x4b, 0x03, 0x04], "a ZIP archive (an .xlsx workbook?); export it as CSV (UTF-8) first"],
  [[0xd0, 0xcf, 0x11, 0xe0], "an old Excel/Office file; export it as CSV (UTF-8) first"],
  [[0x25, 0x50, 0x44, 0x46], "a PDF"],
  [[0x1f, 0x8b], "a gzip archive; decompress it first"],
  [[0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], "a SQLite database"],
];

/**
 * Refuses files that cannot be text we read: empty, binary, UTF-16/32.
 * Returns the size in bytes.
 */
export function sniffFile(file: string): number {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    throw new ImportRefusal(`Cannot read the file ${file}.`);
  }
  if (size === 0) throw new ImportRefusal("The file is empty (0 bytes).");
  // Never open the database file (or any live SQLite database): closing that descriptor would drop this process's locks (app/files.server.ts).
  if (isDatabaseFile(file)) throw new ImportRefusal("This is not a text file: it is a database file.");
  const fd = fs.openSync(file, "r");
  const head = Buffer.alloc(Math.min(size, 65536));
  try {
    fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    throw new ImportRefusal("The file is UTF-16 text; save it as UTF-8 and import it again.");
  }
  for (const [bytes, what] of MAGIC) {
    if (bytes.every((b, i) => head[i] === b)) throw new ImportRefusal(`This is not a text file: it looks like ${what}.`);
  }
  const nul = head.indexOf(0);
  if (nul >= 0) throw new ImportRefusal(`This is not a text file: it contains binary data (a zero byte at byte ${nul + 1}).`);
  if (/^\s*$/.test(head.toString("utf8")) && size <= head.length) {
    throw new ImportRefusal("The file is empty (it holds only blank space).");
  }
  return size;
}

/** Index of the first byte that breaks UTF-8 in buf (or -1); a sequence cut off by the end of buf counts as broken. */
function firstInvalidUtf8(buf: Buffer): number {
  let i = 0;
  while (i < buf.length) {
    const b = buf[i];
    let n = 0;
    // Second-byte ranges that rule out overlong forms, surrogates and code points above U+10FFFF.
    let lo = 0x80;
    let hi = 0xbf;
    if (b < 0x80) n = 0;
    else if (b >= 0xc2 && b <= 0xdf) n = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + n >= buf.length) return n > 0 ? i : -1;
    if (n > 0 && (buf[i + 1] < lo || buf[i + 1] > hi)) return i;
    for (let k = 2; k <= n; k++) if ((buf[i + k] & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return -1;
}

/** How many bytes at the end of buf start a UTF-8 sequence that the next chunk completes (0–3). */
function incompleteTail(buf: Buffer): number {
  const end = buf.length;
  let k = end - 1;
  while (k >= 0 && end - k <= 3 && (buf[k] & 0xc0) === 0x80) k--;
  if (k < 0 || end - k > 3) return 0;
  const b = buf[k];
  const need = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xc2 && b <= 0xdf ? 2 : 1;
  return need > end - k ? end - k : 0;
}

/** Line number (1-based) of the byte at `pos` of the file: counts the newlines before it (only when reporting an error). */
function lineAt(file: string, pos: number): number {
  const fd = fs.openSync(file, "r");
  const buf = Buffer.alloc(1 << 20);
  let lines = 1;
  try {
    for (let at = 0; at < pos;) {
      const n = fs.readSync(fd, buf, 0, Math.min(buf.length, pos - at), at);
      if (n <= 0) break;
      for (let i = buf.indexOf(10, 0); i >= 0 && i < n; i = buf.indexOf(10, i + 1)) lines++;
      at += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  return lines;
}

/**
 * The file as UTF-8 text chunks; a bad byte ends it with an ImportRefusal
 * naming the place. Each chunk is checked with `isUtf8` (strict, like a
 * fatal TextDecoder) and decoded with `toString`; a character cut by a chunk
 * boundary is carried to the next chunk. A leading BOM is dropped.
 */
export async function* decodedChunks(file: string, onBytes?: (chunk: Buffer) => void): AsyncGenerator<string> {
  let offset = 0;
  let carry: Buffer | undefined;
  let first = true;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    onBytes?.(chunk);
    const buf = carry ? Buffer.concat([carry, chunk]) : chunk;
    const start = offset - (carry?.length ?? 0);
    offset += chunk.length;
    const tail = incompleteTail(buf);
    const body = tail ? buf.subarray(0, buf.length - tail) : buf;
    carry = tail ? Buffer.from(buf.subarray(buf.length - tail)) : undefined;
    if (!isUtf8(body)) {
      const at = Math.max(0, firstInvalidUtf8(body));
      throw new ImportRefusal(
        `The file is not UTF-8 text (byte 0x${body[at]?.toString(16).toUpperCase().padStart(2, "0")} at byte ${start + at + 1}, line ${lineAt(file, start + at)}). ` +
          "Save it as UTF-8 (spreadsheet programs: CSV UTF-8) and import it again.",
        { row: lineAt(file, start + at), message: "not UTF-8 text" },
      );
    }
    let text = body.toString("utf8");
    if (first && text.length) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text) yield text;
  }
  if (carry) throw new ImportRefusal(`The file is not UTF-8 text (it ends inside a multi-byte character, byte ${offset}).`);
}

export type RowHandlers = {
  /** CSV: the header's column names, before the first row. */
  header?: (fields: string[]) => void;
  row: (record: SourceRecord, row: number) => void;
  problem: (p: Problem) => void;
  bytes?: (chunk: Buffer) => void;
};

/** Streams a CSV file through papaparse, one object per data row. Resolves with the number of data rows. */
export function readCsv(file: string, h: RowHandlers): Promise<number> {
  return new Promise((resolve, reject) => {
    let count = 0;
    let headerSeen = false;
    let failed: unknown;
    const input = Readable.from(decodedChunks(file, h.bytes));
    input.on("error", (err) => {
      failed = err;
      reject(err);
    });
    const parseStream = Papa.parse as unknown as (
      input: Readable,
      config: Papa.ParseConfig<Record<string, string>> & { error?: (err: Error) => void },
    ) => void;
    parseStream(input, {
      header: true,
      skipEmptyLines: true,
      transformHeader: (name: string) => name.trim(),
      step(results, parser) {
        if (failed) return parser.abort();
        if (!headerSeen) {
          headerSeen = true;
          h.header?.(results.meta.fields ?? []);
        }
        const row = count + 2;
        count++;
        for (const e of results.errors) {
          if (e.code === "UndetectableDelimiter") continue;
          h.problem({ row, message: csvError(e) });
        }
        // A row cut by a quote, or with fields missing or left over, is not read as a record: its fields would be
        // shifted, and their checks would only repeat the one problem in other words.
        if (results.errors.some((e) => e.code !== "UndetectableDelimiter")) return;
        const record = results.data as Record<string, unknown>;
        if ("__parsed_extra" in record) delete record.__parsed_extra;
        h.row(record, row);
      },
      complete() {
        if (failed) return;
        resolve(count);
      },
      error(err: Error) {
        reject(err);
      },
    });
  });
}

function csvError(e: Papa.ParseError): string {
  switch (e.code) {
    case "MissingQuotes":
      return 'a quoted field is never closed (unbalanced quote); every opening " needs a closing "';
    case "InvalidQuotes":
      return 'a quote inside a quoted field is not doubled (write "" for a literal quote)';
    case "TooFewFields":
    case "TooManyFields": {
      // papaparse: "Too few fields: expected 3 fields but parsed 2".
      const m = /expected (\d+) fields? but parsed (\d+)/.exec(e.message);
      if (!m) return e.code === "TooFewFields" ? "this row has fewer fields than the header" : "this row has more fields than the header";
      const [has, want] = [Number(m[2]), Number(m[1])];
      return `this row has ${has} field${has === 1 ? "" : "s"}, the header has ${want}`;
    }
    default:
      return e.message;
  }
}

/** Reads just the header of a CSV file (for header-only files and mapping forms). */
export async function readCsvHeader(file: string): Promise<string[]> {
  for await (const chunk of decodedChunks(file)) {
    const firstLine = chunk.split(/\r?\n/)[0];
    const parsed = Papa.parse<string[]>(firstLine, { header: false });
    return (parsed.data[0] ?? []).map((f) => String(f).trim());
  }
  return [];
}

/** Streams a JSONL file, one object per non-blank line. Resolves with the number of records. */
export async function readJsonl(file: string, h: RowHandlers): Promise<number> {
  let buf = "";
  let line = 0;
  let count = 0;
  const handle = (text: string, isLast: boolean) => {
    line++;
    const t = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (!t.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(t);
    } catch (err) {
      // Never V8's message: it quotes the line.
      const why = jsonSyntaxReason(err, "this line");
      h.problem({
        row: line,
        message: why.cutOff
          ? `the JSON on this line is cut off before it ends (truncated line${isLast ? " at the end of the file" : ""})`
          : why.reason,
      });
      return;
    }
    count++;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      h.problem({ row: line, message: "each line must hold one JSON object ({...})" });
      return;
    }
    h.row(value as SourceRecord, line);
  };
  for await (const chunk of decodedChunks(file, h.bytes)) {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      handle(buf.slice(0, nl), false);
      buf = buf.slice(nl + 1);
    }
  }
  if (buf.length) handle(buf, true);
  return count;
}

/**
 * Reads a whole JSON document, for layouts that need all of it (a JSON object of lists, as
 * RefineBench's file is); arrays of records stream through {@link readJsonArray} instead.
 */
export async function readJson(file: string, onBytes?: (chunk: Buffer) => void): Promise<unknown> {
  let text = "";
  for await (const chunk of decodedChunks(file, onBytes)) text += chunk;
  try {
    return JSON.parse(text);
  } catch (err) {
    const why = jsonSyntaxReason(err);
    const pos = Number(/at position (\d+)/.exec(String((err as Error).message))?.[1]);
    const line = Number.isFinite(pos) ? text.slice(0, pos).split("\n").length : 0;
    const reason = why.cutOff ? "the JSON is cut off before it ends (truncated file)" : "not valid JSON";
    throw new ImportRefusal(`The file is not valid JSON${line ? ` (line ${line})` : ""}: ${reason}.`, { row: line, message: reason });
  }
}

export type JsonArrayHandlers = {
  /** One element of the array, numbered from 1; return false to stop reading. */
  element: (value: unknown, index: number) => void | boolean;
  problem: (p: Problem) => void;
  bytes?: (chunk: Buffer) => void;
};

const STRING_STOP = /["\\]/g;
const STRUCTURE = /["{}[\],]/g;
const NOT_SPACE = /[^ \t\r\n]/g;

/**
 * Streams the elements of a top-level JSON array, one at a time: memory holds the current
 * element and one chunk of the file, never the whole document. A splitter finds where each
 * element ends (outside strings, escapes honoured, brackets matched at depth 0) and
 * JSON.parse reads it, so each element is exactly what JSON.parse would give for it inside
 * the whole document. A malformed element is a problem of its record number (the others are
 * still read); a structural break (unmatched bracket, the file ending inside the array,
 * text after it) refuses the file. `notArray` is the refusal when the document is not an array.
 * Resolves with the number of elements read.
 */
export async function readJsonArray(file: string, h: JsonArrayHandlers, notArray: string): Promise<number> {
  const BEFORE = 0;
  const FIRST = 1; // after "[": an element or "]"
  const NEXT = 2; // after ",": an element
  const IN = 3;
  const AFTER = 4;
  let phase = BEFORE;
  let count = 0;
  let pending = "";
  let inString = false;
  let escape = false;
  const stack: number[] = [];
  const refuse = (message: string): never => {
    throw new ImportRefusal(`The file is not a well-formed JSON array: record ${count}: ${message}.`, { row: count, message });
  };
  /** Parses the element that ends here; false when the handler asks to stop. */
  const finish = (text: string): boolean => {
    if (!text.trim()) refuse("an empty record (two commas in a row, or a comma before the closing ])");
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      h.problem({ row: count, message: jsonSyntaxReason(err, "this record").reason });
      return true;
    }
    return h.element(value, count) !== false;
  };
  for await (const text of decodedChunks(file, h.bytes)) {
    let i = 0;
    let start = 0;
    const n = text.length;
    while (i < n) {
      if (phase === IN) {
        if (inString) {
          if (escape) {
            escape = false;
            i++;
            continue;
          }
          STRING_STOP.lastIndex = i;
          const m = STRING_STOP.exec(text);
          if (!m) {
            i = n;
            break;
          }
          i = m.index + 1;
          if (text.charCodeAt(m.index) === 92) escape = true;
          else inString = false;
          continue;
        }
        STRUCTURE.lastIndex = i;
        const m = STRUCTURE.exec(text);
        if (!m) {
          i = n;
          break;
        }
        const c = text.charCodeAt(m.index);
        i = m.index + 1;
        if (c === 34) inString = true;
        else if (c === 123 || c === 91) stack.push(c);
        else if (c === 125 || c === 93) {
          if (stack.length) {
            const open = stack.pop();
            if ((open === 123) !== (c === 125)) refuse(`a "${String.fromCharCode(c)}" closes a "${String.fromCharCode(open!)}"`);
          } else if (c === 93) {
            const more = finish(pending + text.slice(start, m.index));
            pending = "";
            phase = AFTER;
            if (!more) return count;
          } else refuse('a "}" with no "{" before it');
        } else if (stack.length === 0) {
          // A comma at depth 0 ends the element.
          const more = finish(pending + text.slice(start, m.index));
          pending = "";
          phase = NEXT;
          if (!more) return count;
        }
        continue;
      }
      NOT_SPACE.lastIndex = i;
      const m = NOT_SPACE.exec(text);
      if (!m) break;
      i = m.index;
      const c = text.charCodeAt(i);
      if (phase === BEFORE) {
        if (c !== 91) throw new ImportRefusal(notArray);
        phase = FIRST;
        i++;
      } else if (phase === AFTER) {
        throw new ImportRefusal("The file is not a well-formed JSON array: there is text after its closing ].", {
          row: 0,
          message: "text after the closing ] of the array",
        });
      } else if (c === 93 && phase === FIRST) {
        phase = AFTER;
        i++;
      } else if (c === 93) {
        refuse("a comma after the last record");
      } else {
        count++;
        phase = IN;
        start = i;
      }
    }
    if (phase === IN) {
      pending += text.slice(start);
      // The carried text is a copy, never a slice that keeps the whole chunk alive.
      if (pending.length < 4096) pending = (" " + pending).slice(1);
    }
  }
  if (phase === BEFORE) throw new ImportRefusal(notArray);
  if (phase !== AFTER) {
    const message = "the file ends inside the array (it is cut off, or its closing ] is missing)";
    throw new ImportRefusal(`The file is not a well-formed JSON array: record ${Math.max(count, 1)}: ${message}.`, {
      row: Math.max(count, 1),
      message,
    });
  }
  return count;
}
