/** Checklist appropriateness, client part: Yes/No on the checklist item alone. */
import { yesNoForm } from "../shared/YesNoForm";

export const checklistAppropriatenessForm = yesNoForm(
  "checklist-appropriateness",
  "Is this a valid criterion for grading answers to this question?",
  false,
);
