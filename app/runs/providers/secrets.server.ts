/**
 * API keys encrypted at rest: AES-256-GCM (node:crypto) with a 32-byte key
 * from CONCORD_ENCRYPTION_KEY (base64 or hex), or else from a file beside the
 * database ("concord-encryption-key", created once with mode 0600). A stored
 * key reads "enc:v1:<iv>:<tag>:<ciphertext>" (base64); a plaintext key left by
 * an older version is encrypted in place the first time the providers are
 * read (encryptPlaintextKeys), and still works meanwhile.
 *
 * Losing the key file makes stored API keys unreadable (re-enter them); it
 * never exposes them.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { and, eq, isNotNull, ne, notLike } from "drizzle-orm";
import { databasePathFromEnv, stateDirFor } from "../../../db/client";
import { dalOf, type DalLike } from "../../dal.server";

const PREFIX = "enc:v1:";
const KEY_FILE = "concord-encryption-key";

export class SecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretError";
  }
}

const keys = new Map<string, Buffer>();

function decodeKey(text: string, where: string): Buffer {
  const t = text.trim();
  const buf = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64");
  if (buf.length !== 32) throw new SecretError(`${where}: the encryption key must be 32 bytes (64 hex digits or base64)`);
  return buf;
}

/** The encryption key for the database at `databaseFile` (default: DATABASE_URL). */
export function encryptionKey(databaseFile: string = databasePathFromEnv()): Buffer {
  const fromEnv = process.env.CONCORD_ENCRYPTION_KEY;
  if (fromEnv) return decodeKey(fromEnv, "CONCORD_ENCRYPTION_KEY");
  const cacheKey = databaseFile === ":memory:" || databaseFile === "" ? ":memory:" : path.join(stateDirFor(databaseFile), KEY_FILE);
  const hit = keys.get(cacheKey);
  if (hit) return hit;
  if (cacheKey === ":memory:") {
    const k = crypto.randomBytes(32); // an in-memory database lives as long as this process
    keys.set(cacheKey, k);
    return k;
  }
  const file = cacheKey;
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // Written to a private temporary file, then linked into place: link fails if another process won the race.
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`;
    fs.writeFileSync(tmp, crypto.randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" });
    try {
      fs.linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  const k = decodeKey(fs.readFileSync(file, "utf8"), file);
  keys.set(cacheKey, k);
  return k;
}

export const isEncrypted = (stored: string | null | undefined): boolean => typeof stored === "string" && stored.startsWith(PREFIX);

export function encryptSecret(plain: string, key: Buffer = encryptionKey()): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `${PREFIX}${iv.toString("base64")}:${cipher.getAuthTag().toString("base64")}:${ct.toString("base64")}`;
}

/** The plaintext of a stored key (a legacy plaintext key is returned as is). */
export function decryptSecret(stored: string | null | undefined, key?: Buffer): string | null {
  if (stored == null || stored === "") return null;
  if (!isEncrypted(stored)) return stored;
  const [iv, tag, ct] = stored.slice(PREFIX.length).split(":");
  try {
    const decipher = crypto.createDecipheriv("aes-256-gcm", key ?? encryptionKey(), Buffer.from(iv, "base64"));
    decipher.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64")), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretError("the stored API key cannot be decrypted (the encryption key changed?); enter the key again");
  }
}

/** Encrypts every plaintext API key in place. Returns how many were migrated. */
export async function encryptPlaintextKeys(db: DalLike): Promise<number> {
  const d = dalOf(db);
  const { providers } = d.t;
  const rows = await d.q
    .select({ id: providers.id, apiKey: providers.apiKey })
    .from(providers)
    .where(and(isNotNull(providers.apiKey), ne(providers.apiKey, ""), notLike(providers.apiKey, "enc:v1:%")));
  if (rows.length === 0) return 0;
  const key = encryptionKey(d.location);
  await d.tx(async (q) => {
    for (const r of rows)
      await q
        .update(providers)
        .set({ apiKey: encryptSecret(r.apiKey!, key) })
        .where(and(eq(providers.id, r.id), eq(providers.apiKey, r.apiKey!)));
  });
  return rows.length;
}

/** Masks a secret in a text (kept with the other outbound-error rules in egress.server.ts). */
export { maskSecret } from "./egress.server";
