/** Best-of-N: gold and final-label fields. */
import { FieldError, invalidProps } from "~/components/FieldError";
import type { FinalProps, GoldProps, KindFields } from "../form-types";

function Gold({ unitId, values, responses, allowTies, errors, scope }: GoldProps) {
  return (
    <label>
      Best response
      <select
        name="best"
        defaultValue={values.best ?? ""}
        aria-label={`Known best response of unit ${unitId}`}
        {...invalidProps(errors, "best", scope)}
      >
        <option value="">—</option>
        {responses.map((r) => (
          <option key={r.letter} value={r.letter}>
            {r.letter}: {r.reference ? "the reference" : (r.model ?? "response")}
          </option>
        ))}
        {allowTies ? <option value="tie">Tie</option> : null}
      </select>
      <FieldError errors={errors} name="best" scope={scope} />
    </label>
  );
}

function Final({ responses }: FinalProps) {
  return (
    <div className="choice-row">
      {responses.map((r) => (
        <label className="choice" key={r.letter}>
          <input type="radio" name="best" value={r.letter} /> {r.letter}
        </label>
      ))}
      <label className="choice">
        <input type="radio" name="best" value="tie" /> Tie
      </label>
    </div>
  );
}

export const bestOfNFields: KindFields = { id: "best-of-n", Gold, goldField: (n) => n === "best", Final };
