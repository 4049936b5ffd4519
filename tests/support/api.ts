/** What the HTTP API's tests share: the running server's database and bearer requests. */
import { openDatabase, type Db } from "../../db/client";
import { AppClient, type RunningApp } from "./app-server";

/** Runs `fn` on the running server's database (another connection; the server sees the change at its next read). */
export async function withAppDb<T>(app: RunningApp, fn: (db: Db) => Promise<T> | T): Promise<T> {
  const db = openDatabase(app.databaseFile);
  try {
    return await fn(db);
  } finally {
    db.$client.close();
  }
}

/** A request with `Authorization: Bearer token`; a body other than a string is sent as JSON. */
export function bearerRequest(
  app: RunningApp,
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return new AppClient(app.url).request(
    method,
    path,
    {
      Authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
      ...headers,
    },
    body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  );
}
