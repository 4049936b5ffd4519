/** Applies pending migrations to the database named by DATABASE_URL (a SQLite file or a postgres:// URL). */
import { databasePathFromEnv, openDatabase } from "../db/client";
import { isPostgresUrl, openPgDatabase } from "../db/client-pg";
import { maskUrl } from "../db/copy";

const file = databasePathFromEnv();
try {
  if (isPostgresUrl(file)) {
    await (await openPgDatabase(file, { max: 1 })).$client.end();
    console.log(`Concord: ${maskUrl(file)} is up to date.`);
  } else {
    openDatabase(file).$client.close();
    console.log(`Concord: ${file} is up to date.`);
  }
} catch (err) {
  // A driver error may quote the URL; its password is masked.
  console.error(`Concord: ${maskUrl(String((err as Error).message ?? err))}`);
  process.exit(1);
}
