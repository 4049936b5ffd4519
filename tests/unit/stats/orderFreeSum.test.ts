import { describe, expect, it } from "vitest";
import { orderFreeMean, orderFreeSum } from "../../../app/stats";

// Yes-counts out of 3 checklist items for 30 instances, in two orders a database could return them in
// (found by shuffling; a left-to-right sum of the two gives 66.66666666666669 and 66.66666666666667).
const A = [1, 3, 2, 1, 2, 1, 3, 2, 1, 2, 1, 2, 1, 3, 3, 1, 2, 3, 3, 2, 3, 1, 1, 3, 2, 3, 3, 2, 1, 2];
const B = [3, 1, 2, 1, 2, 2, 1, 2, 3, 3, 1, 1, 2, 2, 3, 3, 3, 1, 1, 2, 1, 3, 2, 3, 2, 3, 3, 2, 1, 1];
const frac = (xs: number[]) => xs.map((k) => k / 3);
const naive = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("orderFreeSum", () => {
  it("the same values in any order give the same last digit, where a left-to-right sum does not", () => {
    expect([...A].sort()).toEqual([...B].sort());
    // The precondition that makes this test mean something: the orders differ when summed naively.
    expect((100 * naive(frac(A))) / 30).not.toBe((100 * naive(frac(B))) / 30);
    expect(orderFreeSum(frac(A))).toBe(orderFreeSum(frac(B)));
    expect(orderFreeMean(frac(A))).toBe(orderFreeMean(frac(B)));
    // Exact value: 60 Yes of 90 items = 2/3.
    expect(A.reduce((a, b) => a + b, 0)).toBe(60);
    expect(orderFreeMean(frac(A))).toBeCloseTo(2 / 3, 14);
  });

  it("no values: the sum is 0 and the mean NaN", () => {
    expect(orderFreeSum([])).toBe(0);
    expect(orderFreeMean([])).toBeNaN();
  });
});
