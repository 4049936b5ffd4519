/** The Yes/No kinds' gold and final-label fields: Yes or No. */
import { FieldError, invalidProps } from "~/components/FieldError";
import type { GoldProps, KindFields } from "../form-types";

function Gold({ unitId, values, errors, scope }: GoldProps) {
  return (
    <label>
      Known answer
      <select
        name="answer"
        defaultValue={values.answer ?? ""}
        aria-label={`Known answer of unit ${unitId}`}
        {...invalidProps(errors, "answer", scope)}
      >
        <option value="">—</option>
        <option>Yes</option>
        <option>No</option>
      </select>
      <FieldError errors={errors} name="answer" scope={scope} />
    </label>
  );
}

function Final() {
  return (
    <div className="choice-row">
      {["Yes", "No"].map((v) => (
        <label className="choice" key={v}>
          <input type="radio" name="answer" value={v} /> {v}
        </label>
      ))}
    </div>
  );
}

/** A Yes/No kind's gold and final-label fields. */
export function yesNoFields(id: string): KindFields {
  return { id, Gold, goldField: (n) => n === "answer", Final };
}
