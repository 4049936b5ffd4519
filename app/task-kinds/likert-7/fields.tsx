/** Likert 1–7: gold and final-label fields. */
import { FieldError, invalidProps } from "~/components/FieldError";
import type { FinalProps, GoldProps, KindFields } from "../form-types";

const POINTS = ["1", "2", "3", "4", "5", "6", "7"];

function Gold({ unitId, values, errors, scope }: GoldProps) {
  return (
    <label>
      Known point (1–7)
      <select
        name="score"
        defaultValue={values.score ?? ""}
        aria-label={`Known point of unit ${unitId}`}
        {...invalidProps(errors, "score", scope)}
      >
        <option value="">—</option>
        {POINTS.map((v) => (
          <option key={v}>{v}</option>
        ))}
      </select>
      <FieldError errors={errors} name="score" scope={scope} />
    </label>
  );
}

function Final({ rules }: FinalProps) {
  const s = rules.settings ?? {};
  return (
    <div className="choice-row" role="radiogroup" aria-label="Final point">
      {POINTS.map((v) => (
        <label className="choice" key={v}>
          <input type="radio" name="score" value={v} /> {v}
          {v === "1" && s.lowAnchor ? ` (${s.lowAnchor})` : ""}
          {v === "7" && s.highAnchor ? ` (${s.highAnchor})` : ""}
        </label>
      ))}
    </div>
  );
}

export const likert7Fields: KindFields = { id: "likert-7", Gold, goldField: (n) => n === "score", Final };
