/**
 * The one database client. Opens the SQLite file named by DATABASE_URL
 * (default data/concord.db), turns on WAL and foreign keys, and applies the
 * committed drizzle-kit migrations, so an older database is upgraded in place.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import * as schema from "./schema";

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/** db/migrations, found from this file (db/) or from the server bundle (build/). */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../db/migrations", import.meta.url));

export class DatabaseOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseOpenError";
  }
}

export function databasePathFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const url = env.DATABASE_URL?.trim() || "data/concord.db";
  return url.startsWith("file:") ? url.slice("file:".length) : url;
}

/**
 * Opens (creating if needed) and migrates a database file.
 * Throws DatabaseOpenError with a one-line message if the file is not SQLite.
 */
export function openDatabase(file: string, opts: { migrationsFolder?: string } = {}): Db {
  if (file !== ":memory:") {
    const dir = path.dirname(path.resolve(file));
    fs.mkdirSync(dir, { recursive: true });
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
      throw new DatabaseOpenError(`DATABASE_URL points at a directory, not a SQLite file: ${file}`);
    }
  }
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma("busy_timeout = 5000");
    sqlite.pragma("synchronous = NORMAL");
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new DatabaseOpenError(`DATABASE_URL does not point at a SQLite database: ${file}`);
    }
    throw new DatabaseOpenError(`Cannot open database ${file}: ${(err as Error).message}`);
  }
  const db = drizzle(sqlite, { schema }) as Db;
  migrate(db, { migrationsFolder: opts.migrationsFolder ?? MIGRATIONS_DIR });
  return db;
}

let singleton: Db | undefined;

/** The process-wide client, opened on first use from DATABASE_URL. */
export function getDb(): Db {
  if (!singleton) singleton = openDatabase(databasePathFromEnv());
  return singleton;
}

/** Closes the process-wide client (tests and graceful shutdown). */
export function closeDb(): void {
  singleton?.$client.close();
  singleton = undefined;
}

export { schema };
