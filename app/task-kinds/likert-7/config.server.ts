/** Likert 1–7, server part: the zod schema of its settings (the question and the two anchors), stored in tasks.config. */
import { z } from "zod";

export const likert7Server = {
  id: "likert-7",
  settings: z.object({
    question: z.string().trim().min(1, "Write the question annotators answer.").max(1000, "Keep the question under 1000 characters."),
    lowAnchor: z.string().trim().min(1, "Name the anchor of 1 (e.g. Strongly disagree).").max(100, "Keep the anchor under 100 characters."),
    highAnchor: z.string().trim().min(1, "Name the anchor of 7 (e.g. Strongly agree).").max(100, "Keep the anchor under 100 characters."),
  }),
};
