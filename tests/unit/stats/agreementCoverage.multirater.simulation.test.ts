/**
 * Coverage of Gwet's AC1 and Krippendorff's alpha intervals (three raters), analytic and
 * bootstrap, at realistic n: see agreementCoverage.ts for the model and seeds.
 */
import { describe, it } from "vitest";
import { CASES, checkCoverage } from "./agreementCoverage";

describe("coverage of AC1 and alpha intervals at realistic n (seeded simulations)", () => {
  it.each([[CASES[2].name, 2] as const, [CASES[3].name, 3] as const])(
    "%s: analytic and bootstrap 95 percent intervals cover the true value 93 to 97 percent of the time",
    (_name, index) => checkCoverage(index),
  );
});
