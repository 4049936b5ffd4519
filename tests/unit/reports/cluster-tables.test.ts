import { describe, expect, it } from "vitest";
import { clusterTables } from "../../../app/reports/agreement/resampling";
import { bootstrapCI } from "../../../app/stats";

// Each row adds `value` to one cell of a 3-cell table; a cluster's table is the sum of its rows'.
// 20 clusters of 3 rows: clusters c and c + 6 have equal tables (repeats, stored once), and
// clusters c and c + 3 tables that differ only by 1e-9 in cell 0 (0.5 against 0.5 + 1e-9), below
// the resolution of the hash that groups equal tables — they must still be kept apart.
const rows = Array.from({ length: 60 }, (_, i) => {
  const c = i % 20;
  const cell = Math.floor(i / 20);
  const value = cell === 0 ? (c % 2 ? 0.5 + 1e-9 : 0.5) : cell === 1 ? 1 + (c % 3 === 0 ? 1 : 0) : 1;
  return { cluster: c, cell, value };
});
const L = 3;
const tableOf = (rs: number[]) => {
  const t = new Float64Array(L);
  for (const r of rs) t[rows[r].cell] += rows[r].value;
  return t;
};
// A statistic that tells the tables apart at 1e-9: the weighted first cell over the total.
const stat = (t: Float64Array) => t[0] / (t[0] + t[1] + t[2]);

describe("clusterTables (item-cluster bootstrap from per-cluster tables)", () => {
  it("gives the interval of the row bootstrap clustered by the same key, with nearly equal tables kept apart", () => {
    const tables = clusterTables({ rows: rows.length, clusterOf: (r) => rows[r].cluster, size: L, table: tableOf });
    expect(tables.clusters).toBe(20);
    const got = tables.bootstrap(stat, 7, 400);
    // Independent computation: bootstrapCI over the rows themselves, clustered by the same key and seed,
    // each resample's table summed row by row (small data: the same draws, as clusterTables documents).
    const want = bootstrapCI({
      data: rows.map((_, i) => i),
      statistic: (sample) => stat(tableOf(sample)),
      seed: 7,
      resamples: 400,
      cluster: (r) => rows[r].cluster,
    });
    expect(got.ci[0]).toBeCloseTo(want.ci[0], 13);
    expect(got.ci[1]).toBeCloseTo(want.ci[1], 13);
    expect(got.se).toBeCloseTo(want.se, 13);
  });

  it("counts clusters with equal tables as one table drawn several times", () => {
    // Clusters 0..9 each one row adding 1 to cell 0; 10..19 one row adding 1 to cell 1: two distinct tables.
    const n = 20;
    const tables = clusterTables({
      rows: n,
      clusterOf: (r) => r,
      size: 2,
      table: (rs) => Float64Array.from([rs[0] < 10 ? 1 : 0, rs[0] < 10 ? 0 : 1]),
    });
    const seen: number[] = [];
    tables.bootstrap(
      (t) => {
        seen.push(t[0] + t[1]);
        return t[0] / (t[0] + t[1]);
      },
      3,
      50,
    );
    // Every resample draws 20 clusters in all.
    expect(seen.filter((x) => x !== n)).toEqual([]);
  });
});
