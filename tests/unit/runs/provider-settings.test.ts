/** Provider settings (strict), recording names (never paths) and API-key encryption. */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { parseProviderSettings } from "../../../app/runs/providers/settings";
import { listRecordings, loadReplay, validateRecordingName } from "../../../app/runs/providers/replay.server";
import { decryptSecret, encryptSecret, maskSecret } from "../../../app/runs/providers/secrets.server";
import { tempDir } from "../../support/db";

function recordingsIn(dir: string) {
  const before = process.env.CONCORD_RECORDINGS_DIR;
  process.env.CONCORD_RECORDINGS_DIR = dir;
  onTestFinished(() => {
    if (before === undefined) delete process.env.CONCORD_RECORDINGS_DIR;
    else process.env.CONCORD_RECORDINGS_DIR = before;
  });
}

describe("provider settings", () => {
  it("accepts the documented keys and names an unknown or mistyped one", () => {
    expect(
      parseProviderSettings("openai-compatible", {
        temperature: 0,
        top_p: 0.9,
        max_tokens: 100,
        continueMode: "template",
        chatTemplate: "{{x}}",
      }),
    ).toMatchObject({ temperature: 0, continueMode: "template" });
    expect(() => parseProviderSettings("openai-compatible", { temprature: 0 })).toThrow(
      /^settings\.temprature: unknown setting for a openai-compatible provider \(known: .*temperature/,
    );
    expect(() => parseProviderSettings("openai-compatible", { temperature: "hot" })).toThrow(/^settings\.temperature: /);
    expect(() => parseProviderSettings("openai-compatible", { continueMode: "magic" })).toThrow(/^settings\.continueMode: /);
    expect(() => parseProviderSettings("openai-compatible", [])).toThrow("settings: must be a JSON object");
    expect(() => parseProviderSettings("replay", { file: "demo-refinebench.json", temperature: 0 })).toThrow(
      /^settings\.temperature: unknown setting for a replay provider/,
    );
  });
});

describe("recordings are chosen by name in one folder", () => {
  it("refuses paths, parent references and names not in the folder, before touching any file", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "good.json"), JSON.stringify({ recorded: true, entries: [] }));
    fs.mkdirSync(path.join(dir, "sub"));
    fs.writeFileSync(path.join(dir, "sub", "deep.json"), "{}");
    fs.symlinkSync("/etc/passwd", path.join(dir, "link.json"));
    recordingsIn(dir);
    expect(listRecordings()).toEqual(["good.json"]); // no folders, no links
    expect(validateRecordingName("good.json")).toBe("good.json");
    for (const bad of ["/etc/passwd", "../../data/concord.db", "sub/deep.json", "..", "a\\b.json", "good.json/..", "./good.json"])
      expect(() => validateRecordingName(bad), bad).toThrow("a recording is chosen by its name in the recordings folder, not by a path");
    expect(() => validateRecordingName("link.json")).toThrow(/no recording named "link.json" in the recordings folder \(good\.json\)/);
    expect(() => validateRecordingName("")).toThrow(/a recording name is required/);
  });

  it("a recording that is not valid JSON, or not of the recordings shape, is refused without quoting it", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "text.json"), "root:x:0:0:root:/root:/bin/bash\n");
    fs.writeFileSync(path.join(dir, "shape.json"), JSON.stringify({ recorded: true, entries: [{ key: 1, text: "SECRET-TEXT" }] }));
    recordingsIn(dir);
    expect(() => loadReplay("text.json")).toThrow(/^recording text\.json: not valid JSON$/);
    let message = "";
    try {
      loadReplay("shape.json");
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe("recording shape.json: entries.0.key does not have the recordings shape (invalid_type)");
  });
});

describe("API keys at rest", () => {
  it("AES-256-GCM round trip; a different key cannot read it; plaintext passes through; echoes are masked", () => {
    const key = crypto.randomBytes(32);
    const stored = encryptSecret("sk-live-123456", key);
    expect(stored).toMatch(/^enc:v1:[^:]+:[^:]+:[^:]+$/);
    expect(stored).not.toContain("sk-live");
    expect(encryptSecret("sk-live-123456", key)).not.toBe(stored); // a fresh IV each time
    expect(decryptSecret(stored, key)).toBe("sk-live-123456");
    expect(() => decryptSecret(stored, crypto.randomBytes(32))).toThrow(/cannot be decrypted \(the encryption key changed\?\)/);
    expect(decryptSecret("sk-plain", key)).toBe("sk-plain");
    expect(decryptSecret(null)).toBeNull();
    expect(maskSecret("Incorrect API key provided: sk-live-123456. And again sk-live-123456", "sk-live-123456")).toBe(
      "Incorrect API key provided: sk-…[key masked]. And again sk-…[key masked]",
    );
  });
});
