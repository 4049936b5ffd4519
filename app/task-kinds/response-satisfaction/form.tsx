/** Response satisfaction, client part: the response, then Yes/No on the checklist item. */
import { yesNoForm } from "../shared/YesNoForm";

export const responseSatisfactionForm = yesNoForm("response-satisfaction", "Does the response satisfy the checklist item?", true);
