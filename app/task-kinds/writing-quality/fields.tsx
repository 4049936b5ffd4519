/** Writing quality: gold and final-label fields. */
import { FieldError, invalidProps } from "~/components/FieldError";
import type { FinalProps, GoldProps, KindFields } from "../form-types";

function Gold({ unitId, values, responses, errors, scope }: GoldProps) {
  return responses.map((r) =>
    r.reference ? null : (
      <label key={r.letter}>
        Score of response {r.letter}
        <select
          name={`score.${r.letter}`}
          defaultValue={values[`score.${r.letter}`] ?? ""}
          aria-label={`Known score of response ${r.letter} in unit ${unitId}`}
          {...invalidProps(errors, `score.${r.letter}`, scope)}
        >
          <option value="">—</option>
          {[1, 2, 3, 4, 5].map((n) => (
            <option key={n}>{n}</option>
          ))}
        </select>
        <FieldError errors={errors} name={`score.${r.letter}`} scope={scope} />
      </label>
    ),
  );
}

function Final({ responses, rules }: FinalProps) {
  return responses.map((r) => (
    <div className="choice-row" key={r.letter}>
      <span>Response {r.letter}</span>
      <select name={`score.${r.letter}`} aria-label={`Score of Response ${r.letter}`} defaultValue="">
        <option value="">—</option>
        {[1, 2, 3, 4, 5].map((s) => (
          <option key={s}>{s}</option>
        ))}
      </select>
      <select name={`reason.${r.letter}`} aria-label={`Penalty reason of Response ${r.letter}`} defaultValue="">
        <option value="">—</option>
        {rules.penaltyReasons.map((p) => (
          <option key={p}>{p}</option>
        ))}
      </select>
    </div>
  ));
}

export const writingQualityFields: KindFields = { id: "writing-quality", Gold, goldField: (n) => n.startsWith("score."), Final };
