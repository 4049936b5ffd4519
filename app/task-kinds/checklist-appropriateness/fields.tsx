/** Checklist appropriateness: gold and final-label fields (Yes/No). */
import { yesNoFields } from "../shared/YesNoFields";

export const checklistAppropriatenessFields = yesNoFields("checklist-appropriateness");
