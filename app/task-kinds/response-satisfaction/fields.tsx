/** Response satisfaction: gold and final-label fields (Yes/No). */
import { yesNoFields } from "../shared/YesNoFields";

export const responseSatisfactionFields = yesNoFields("response-satisfaction");
