/**
 * The order test files start in. With no results from an earlier run (a clean checkout, as in CI), vitest starts the
 * largest files first, and the minute-long shared-limits test (mostly waiting for the per-minute window) started
 * near the end, where it ran beside nothing but small files. The slowest files, as measured in a full run
 * (2026-12-06), go first, longest first, so the two lanes end together; the rest keep vitest's own order (with
 * earlier results: failed first, then longest first).
 */
import { BaseSequencer } from "vitest/node";

const SLOWEST_FIRST = [
  "tests/integration/runs-multiworker.test.ts", // 64 s
  "tests/e2e/annotation.test.ts", // 38 s
  "tests/integration/import-chunked-existing.test.ts", // 31 s
  "tests/security/import-conflicts-http.test.ts", // 30 s
  "tests/e2e/annotate-keys-every-kind.test.ts", // 26 s
  "tests/e2e/tour.test.ts", // 25 s
  "tests/e2e/annotate-keyboard.test.ts", // 23 s
  "tests/e2e/likert-7.test.ts", // 23 s
  "tests/e2e/researcher-run-pages.test.ts", // 22 s
  "tests/e2e/import-page.test.ts", // 21 s
  "tests/integration/judge-agreement.test.ts", // 18 s
  "tests/e2e/researcher-tasks.test.ts", // 18 s
  "tests/e2e/app-on-postgres.test.ts", // 17 s
  "tests/e2e/reports.test.ts", // 17 s
];

export default class SlowestFirst extends BaseSequencer {
  /** @param {import("vitest/node").TestSpecification[]} files */
  async sort(files) {
    const sorted = await super.sort(files);
    /** @param {import("vitest/node").TestSpecification} f */
    const rank = (f) => {
      const i = SLOWEST_FIRST.findIndex((p) => f.moduleId.endsWith(p));
      return i < 0 ? SLOWEST_FIRST.length : i;
    };
    // A stable sort: files not in the list keep vitest's order among themselves.
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map((x) => x.f);
  }
}
