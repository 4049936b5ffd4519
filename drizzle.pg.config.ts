import { defineConfig } from "drizzle-kit";

// PostgreSQL: `npx drizzle-kit generate --config drizzle.pg.config.ts` (SQLite: drizzle.config.ts).
export default defineConfig({
  dialect: "postgresql",
  schema: "./db/schema.pg.ts",
  out: "./db/migrations-pg",
});
