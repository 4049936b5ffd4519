/** Applies pending migrations to the database named by DATABASE_URL. */
import { databasePathFromEnv, openDatabase } from "../db/client";

const file = databasePathFromEnv();
try {
  openDatabase(file).$client.close();
  console.log(`Concord: ${file} is up to date.`);
} catch (err) {
  console.error(`Concord: ${(err as Error).message}`);
  process.exit(1);
}
