import { describe, expect, it } from "vitest";
import { PgAdmissionLine } from "../../../app/runs/pg/admission-line.server";
import { RunStopped } from "../../../app/runs/providers/shared-limits.server";
import type { Admission } from "../../../app/runs/pg/queue.server";

/** A provider with `free` slots, answering as admitCallPg does (an id, or try again in 5 ms); how many asked at once. */
function provider(free: number) {
  let asking = 0;
  let most = 0;
  let next = 1;
  return {
    get most() {
      return most;
    },
    free: (n: number) => (free += n),
    ask: async (): Promise<Admission> => {
      most = Math.max(most, ++asking);
      await new Promise((ok) => setTimeout(ok, 1));
      asking--;
      if (free > 0) {
        free--;
        return { id: next++ };
      }
      return { waitMs: 5 };
    },
  };
}

describe("PgAdmissionLine: one caller per process asks PostgreSQL for a slot", () => {
  it("only the head asks; calls are admitted in the order they came, each once", async () => {
    const line = new PgAdmissionLine();
    const p = provider(2);
    const order: number[] = [];
    const calls = Array.from({ length: 6 }, async (_, i) => {
      const id = await line.admit(p.ask);
      order.push(i);
      return id;
    });
    // Free the other slots one at a time, as calls elsewhere end.
    for (let k = 0; k < 4; k++) {
      await new Promise((ok) => setTimeout(ok, 12));
      p.free(1);
    }
    const ids = await Promise.all(calls);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6]);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(p.most).toBe(1);
    expect(line.length).toBe(0);
  });

  it("a waiting call whose run is paused leaves at once without asking; the others go on", async () => {
    const line = new PgAdmissionLine();
    const p = provider(0);
    const stop = new AbortController();
    const first = line.admit(p.ask);
    let secondAsked = 0;
    const second = line.admit(() => (secondAsked++, p.ask()), stop.signal);
    const third = line.admit(p.ask);
    await new Promise((ok) => setTimeout(ok, 8));
    stop.abort("paused");
    await expect(second).rejects.toBeInstanceOf(RunStopped);
    p.free(2);
    expect(await first).toBe(1);
    expect(await third).toBe(2);
    // The paused call never reached the head, so it asked nothing; one ask at a time.
    expect(secondAsked).toBe(0);
    expect(p.most).toBe(1);
  });

  it("wake() ends the head's wait at once (a call of this provider ended in this process)", async () => {
    const line = new PgAdmissionLine();
    let n = 0;
    const ask = async (): Promise<Admission> => (n++ === 0 ? { waitMs: 60_000 } : { id: 7 });
    const t0 = performance.now();
    const admitted = line.admit(ask);
    await new Promise((ok) => setTimeout(ok, 5));
    line.wake();
    expect(await admitted).toBe(7);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});
