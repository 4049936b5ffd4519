/**
 * A run's settings list reads the same whatever order the stored object's keys come in: SQLite keeps the JSON text
 * as written, PostgreSQL's jsonb returns keys shorter-first (then bytewise), so the run page and the results page
 * list them in label order on both.
 */
import { describe, expect, it } from "vitest";
import { settingRows } from "../../../app/runs/setting-rows";

describe("settingRows", () => {
  it("gives the same rows, in label order, for the keys as written and as jsonb orders them", () => {
    const asWritten = { setting: "guided", maxTurns: 2, targetSampling: { temperature: 1, top_p: 0.9 }, stopWhen: ["pass", "max"] };
    // jsonb's order: by key length, then bytewise ("setting" 7, "maxTurns" 8, "stopWhen" 8, "targetSampling" 14; "top_p" 5 < "temperature" 11).
    const asJsonb = { setting: "guided", maxTurns: 2, stopWhen: ["pass", "max"], targetSampling: { top_p: 0.9, temperature: 1 } };
    const expected = [
      ["max turns", "2"],
      ["setting", "guided"],
      ["stop when", "pass, max"],
      ["target sampling · temperature", "1"],
      ["target sampling · top p", "0.9"],
    ];
    expect(settingRows(asWritten)).toEqual(expected);
    expect(settingRows(asJsonb)).toEqual(expected);
    expect(settingRows(null)).toEqual([]);
  });
});
