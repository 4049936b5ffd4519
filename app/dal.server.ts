/**
 * The data-access layer: one async API over SQLite (the embedded default) and
 * PostgreSQL (DATABASE_URL=postgres://…), used the same way on both.
 *
 *   const d = dalOf(db);                       // or getDal() for the process's database
 *   const rows = await d.q.select().from(d.t.users).where(eq(d.t.users.id, id));
 *   const user = first(rows);
 *   await d.tx(async (q) => { await q.insert(d.t.sessions).values(…); … });
 *
 * Rules (each one checked: a violation fails on SQLite at once, not only on PostgreSQL):
 * - Every query is awaited; drizzle's synchronous `.get()`, `.all()` and
 *   `.run()` exist on SQLite only. `first()` takes the first row.
 * - Tables come from `d.t`, the dialect's own schema (db/schema.ts or
 *   db/schema.pg.ts: the same names and columns, each with its own value
 *   mapping — JSON as text or jsonb, booleans as 0/1 or boolean).
 * - Every write runs in `d.tx`. Outside a transaction, on SQLite `d.q` is a
 *   read-only connection (a write there fails with SQLITE_READONLY) that sees
 *   only committed data, as a PostgreSQL pool connection does.
 * - Inside `d.tx`, `d.q` is the transaction's own handle (the one `fn` is
 *   given), so a function called from a transaction reads and writes in it;
 *   a `d.tx` inside a `d.tx` joins the outer one.
 * - Inside `d.tx` await nothing but queries: on SQLite the
 *   transaction holds the database's single write lock, and a transaction
 *   left open across a turn of the event loop (awaiting a fetch, a hash, a
 *   timer) would let every other request's write queue behind it. In tests
 *   that is an error at commit.
 *
 * Transactions are serializable on both dialects. SQLite: a process-wide
 * queue per connection, then BEGIN IMMEDIATE without sleeping in SQLite's
 * busy handler (another process holding the lock is waited for on a timer,
 * the event loop free, as writeWithoutBusyWait does). PostgreSQL: ISOLATION
 * LEVEL SERIALIZABLE, and a transaction that fails with a serialization
 * failure or deadlock (SQLSTATE 40001, 40P01) is run again from the start,
 * so a read-then-write gives the answer SQLite's single writer gives.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import type { SQL } from "drizzle-orm";
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import { PgDialect } from "drizzle-orm/pg-core";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type pg from "pg";
import { BUSY_RETRY_MS, BUSY_TIMEOUT_MS, getDb, isBusyError, markWriteWaiter, schema, type Db } from "../db/client";
import { isPostgresUrl, migratePg, openPgDatabase, pgPool, pgSchema, type PgDb } from "../db/client-pg";

export type Dialect = "sqlite" | "postgres";

/**
 * A query handle. Typed as drizzle's SQLite database so one query text serves
 * both dialects; on PostgreSQL it is the node-postgres database (or its
 * transaction) built on the tables of `t`, whose builders have the same shape.
 */
export type Q = Db;
export type Tables = typeof schema;

export interface Dal {
  readonly dialect: Dialect;
  /** Reads outside a transaction (committed data only). */
  readonly q: Q;
  /** The dialect's tables. */
  readonly t: Tables;
  /** The SQLite file or the PostgreSQL URL: where the installation's state files are (db/client.ts stateDirFor). */
  readonly location: string;
  /** Runs `fn` in one serializable transaction (see TxOptions for the one exception): everything it wrote, or nothing. */
  tx<T>(fn: (q: Q) => Promise<T>, opts?: TxOptions): Promise<T>;
  /** Rows of a raw `sql` query (written in SQL both dialects accept), on `q` or outside a transaction. */
  rows<T>(query: SQL, q?: Q): Promise<T[]>;
  /**
   * The same as arrays of column values, in the order selected: no object per row, which is most of
   * the cost of reading tens of thousands of rows (the reports). On SQLite the statement is prepared
   * once per SQL text and connection.
   */
  arrays(query: SQL, q?: Q): Promise<unknown[][]>;
}

/**
 * `lockedReadCommitted`: on PostgreSQL the transaction runs at READ COMMITTED instead of SERIALIZABLE, for a hot
 * path that takes row locks (`SELECT … FOR UPDATE / FOR SHARE`) on every row its answer depends on before reading
 * them (or whose writes depend on nothing it reads), so it is as safe as SERIALIZABLE for that path, while
 * concurrent transactions on other rows never fail (SERIALIZABLE's predicate locks work per index page: 50 annotators submitting to one task failed each other's
 * transactions by the hundreds without touching a common row). A unique-key violation there is run again too
 * (up to PG_UNIQUE_ATTEMPTS times): the retry reads the row that won. SQLite ignores it (one writer).
 */
export type TxOptions = { lockedReadCommitted?: boolean };

/** Either a data-access layer or a SQLite database (tests and older callers pass the database they opened). */
export type DalLike = Dal | Db;

/** The first row, or undefined. */
export const first = <T>(rows: readonly T[]): T | undefined => rows[0];

/** The number a `SELECT COUNT(…) AS n …` query answers, on `q` or outside a transaction (COUNT is a bigint on PostgreSQL); 0 without a row. */
export async function countOf(d: Dal, query: SQL, q?: Q): Promise<number> {
  return Number(first(await d.rows<{ n: number | string }>(query, q))?.n ?? 0);
}

/** Tests set VITEST; there a SQLite transaction left open across an event-loop turn is an error. */
const STRICT = Boolean(process.env.VITEST);

export class TransactionAwaitedError extends Error {
  constructor() {
    super(
      "A SQLite transaction stayed open across a turn of the event loop: a transaction body may await only its own queries (do the hashing, the fetch or the file I/O before d.tx).",
    );
    this.name = "TransactionAwaitedError";
  }
}

/** One queue per SQLite connection: its transactions run one after another. */
class Queue {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const r = this.tail.then(fn);
    this.tail = r.then(
      () => undefined,
      () => undefined,
    );
    return r;
  }
}

async function beginImmediate(conn: Database.Database): Promise<void> {
  const start = performance.now();
  for (;;) {
    // A pragma run anew each time (a prepared one applies its value only when prepared).
    conn.pragma("busy_timeout = 0");
    try {
      conn.exec("BEGIN IMMEDIATE");
      return;
    } catch (err) {
      if (!isBusyError(err) || performance.now() - start >= BUSY_TIMEOUT_MS) throw err;
      markWriteWaiter(conn);
    } finally {
      conn.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
    await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
  }
}

const sqliteDialect = new SQLiteSyncDialect();
const pgDialect = new PgDialect();

/** Prepared statements per SQLite connection and SQL text (a raw query run again is not parsed and planned again). */
const statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();
const STATEMENTS_PER_CONNECTION = 500;
function statementOf(conn: Database.Database, text: string): Database.Statement {
  let m = statements.get(conn);
  if (!m) statements.set(conn, (m = new Map()));
  let st = m.get(text);
  if (!st) {
    if (m.size >= STATEMENTS_PER_CONNECTION) m.clear();
    st = conn.prepare(text);
    m.set(text, st);
  }
  return st;
}

/** The transaction an async context is in: its handle, while it is open. */
type Open = { owner: Dal; q: Q; open: boolean };
const current = new AsyncLocalStorage<Open>();

/** The open transaction of `owner` this code runs in, if any. */
function openTx(owner: Dal): Open | undefined {
  const o = current.getStore();
  return o && o.open && o.owner === owner ? o : undefined;
}

class SqliteDal implements Dal {
  readonly dialect = "sqlite" as const;
  readonly t = schema;
  private readonly reader: Q;
  private readonly queue = new Queue();

  constructor(
    readonly db: Db,
    reader: Database.Database | null,
  ) {
    this.reader = reader ? (drizzle(reader, { schema }) as Db) : db;
  }

  get location(): string {
    return this.db.$client.name;
  }

  get q(): Q {
    return openTx(this)?.q ?? this.reader;
  }

  tx<T>(fn: (q: Q) => Promise<T>, _opts?: TxOptions): Promise<T> {
    const outer = openTx(this);
    if (outer) return fn(outer.q);
    return this.queue.run(async () => {
      const conn = this.db.$client;
      if (conn.inTransaction)
        throw new Error("A transaction is already open on this connection (a synchronous one outside the data-access layer).");
      await beginImmediate(conn);
      let crossedTurn = false;
      const probe = STRICT ? setImmediate(() => (crossedTurn = true)) : null;
      const open: Open = { owner: this, q: this.db, open: true };
      try {
        const result = await current.run(open, () => fn(this.db));
        if (crossedTurn) throw new TransactionAwaitedError();
        conn.exec("COMMIT");
        return result;
      } catch (err) {
        if (conn.inTransaction) conn.exec("ROLLBACK");
        throw err;
      } finally {
        open.open = false;
        if (probe) clearImmediate(probe);
      }
    });
  }

  async rows<T>(query: SQL, q: Q = this.q): Promise<T[]> {
    // Prepared once per SQL text and connection, as `arrays` (drizzle's `all` prepares the text on every call).
    const { sql: text, params } = sqliteDialect.sqlToQuery(query);
    const st = statementOf(q.$client, text);
    return (st.reader ? st.raw(false).all(...params) : (st.run(...params), [])) as T[];
  }

  async arrays(query: SQL, q: Q = this.q): Promise<unknown[][]> {
    const { sql: text, params } = sqliteDialect.sqlToQuery(query);
    return statementOf(q.$client, text)
      .raw(true)
      .all(...params) as unknown[][];
  }
}

const RETRYABLE = new Set(["40001", "40P01"]);
/**
 * How many times a PostgreSQL transaction is tried before its serialization
 * failure is thrown: many at once on the same rows (20 sign-in attempts at
 * one email, 50 annotators submitting to one task whose freshness counter
 * every submission bumps) each lose to the others several times before their
 * turn; under load a transaction lasts long enough to lose dozens of times.
 */
export const PG_TX_ATTEMPTS = 120;
/** Attempts of a lockedReadCommitted transaction that lost a unique key to a concurrent one (the retry sees the winner). */
const PG_UNIQUE_ATTEMPTS = 5;
/** The longest pause between two attempts (ms): full jitter below it, so losers spread out instead of colliding again. */
const PG_TX_BACKOFF_CAP_MS = 250;

class PgDal implements Dal {
  readonly dialect = "postgres" as const;
  readonly t = { ...schema, ...pgSchema } as unknown as Tables;
  /** Transactions run again (a serialization failure, a deadlock, a lost unique key) since this layer was made (tests, diagnostics). */
  retries = 0;

  constructor(readonly pg: PgDb) {}

  get location(): string {
    return this.pg.$client.options.connectionString ?? "";
  }

  get q(): Q {
    return openTx(this)?.q ?? (this.pg as unknown as Q);
  }

  async tx<T>(fn: (q: Q) => Promise<T>, opts: TxOptions = {}): Promise<T> {
    const outer = openTx(this);
    if (outer) return fn(outer.q);
    const isolationLevel = opts.lockedReadCommitted ? "read committed" : "serializable";
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pg.transaction(
          async (tx) => {
            const open: Open = { owner: this, q: tx as unknown as Q, open: true };
            try {
              return await current.run(open, () => fn(open.q));
            } finally {
              open.open = false;
            }
          },
          { isolationLevel },
        );
      } catch (err) {
        const code = (err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code;
        const unique = code === "23505" && opts.lockedReadCommitted === true && attempt < PG_UNIQUE_ATTEMPTS;
        if (!code || (!RETRYABLE.has(code) && !unique) || attempt >= PG_TX_ATTEMPTS) throw err;
        this.retries++;
        // Exponential backoff with full jitter (capped), so transactions that collided do not collide again in step.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(PG_TX_BACKOFF_CAP_MS, 2 ** attempt)));
      }
    }
  }

  async rows<T>(query: SQL, q: Q = this.q): Promise<T[]> {
    const r = await (q as unknown as NodePgDatabase).execute(query);
    return r.rows as T[];
  }

  async arrays(query: SQL, q: Q = this.q): Promise<unknown[][]> {
    const { sql: text, params } = pgDialect.sqlToQuery(query);
    // A transaction's own client (drizzle keeps it on the session), else the pool.
    const client = (q as unknown as { session?: { client?: pg.ClientBase | pg.Pool } }).session?.client ?? this.pg.$client;
    const r = await client.query<unknown[]>({ text, values: params, rowMode: "array" });
    return r.rows;
  }
}

const dals = new WeakMap<Db, SqliteDal>();

/** The data-access layer of a SQLite database (one per connection: its transactions share one queue). */
function sqliteDal(db: Db): SqliteDal {
  let d = dals.get(db);
  if (!d) {
    const file = db.$client.name;
    // A second, read-only connection for reads outside transactions; an in-memory database has only the one.
    const reader = db.$client.memory || !file || file === ":memory:" ? null : new Database(file, { readonly: true, fileMustExist: true });
    if (reader) {
      reader.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      reader.pragma("foreign_keys = ON");
      // The reader ends with the connection it serves: whoever closes the database (a command, a test, the
      // server at shutdown) knows nothing of it, and an open reader would keep the last close from checkpointing
      // the WAL into the file and removing it.
      const conn = db.$client;
      const closeOwner = conn.close.bind(conn);
      conn.close = (() => {
        if (reader.open) reader.close();
        dals.delete(db);
        return closeOwner();
      }) as typeof conn.close;
    }
    d = new SqliteDal(db, reader);
    dals.set(db, d);
  }
  return d;
}

/** The layer for what a caller passed: a Dal as it is, a SQLite database through its own layer. */
export function dalOf(x: DalLike): Dal {
  return x instanceof SqliteDal || x instanceof PgDal ? x : sqliteDal(x as Db);
}

let pgSingleton: PgDal | undefined;
let pgMigrated = false;
/** Connections per process (CONCORD_PG_POOL, default 10): N app servers and M workers open N+M pools. */
const PG_POOL_SIZE = Math.max(1, Number(process.env.CONCORD_PG_POOL) || 10);

/**
 * Opens the process's database when it is PostgreSQL (the pool, the
 * migrations); a no-op for SQLite, which opens on first use. Servers, workers
 * and CLI commands await it once before serving.
 */
export async function initDal(url = process.env.DATABASE_URL): Promise<Dal> {
  if (!isPostgresUrl(url)) return getDal();
  if (!pgSingleton) pgSingleton = new PgDal(await openPgDatabase(url!.trim(), { max: PG_POOL_SIZE }));
  else if (!pgMigrated) await migratePg(pgSingleton.pg);
  pgMigrated = true;
  return pgSingleton;
}

/**
 * The process's data-access layer, from DATABASE_URL. On PostgreSQL a pool is
 * opened here if initDal has not run in this module instance (the server's
 * Remix bundle has its own; the server applied the migrations at start).
 */
export function getDal(): Dal {
  const url = process.env.DATABASE_URL;
  if (isPostgresUrl(url)) {
    pgSingleton ??= new PgDal(pgPool(url!.trim(), { max: PG_POOL_SIZE }));
    return pgSingleton;
  }
  return sqliteDal(getDb());
}

/** A layer over an open PostgreSQL database (tests, db:copy). */
export function pgDal(pg: PgDb): Dal {
  return new PgDal(pg);
}

/** How many transactions a PostgreSQL layer has run again (PgDal.retries; 0 on SQLite, whose one writer never retries). */
export function txRetries(d: Dal): number {
  return d instanceof PgDal ? d.retries : 0;
}

/** Closes the process's PostgreSQL pool (graceful shutdown). SQLite closes with closeDb. */
export async function closeDal(): Promise<void> {
  const p = pgSingleton;
  pgSingleton = undefined;
  pgMigrated = false;
  await p?.pg.$client.end();
}
