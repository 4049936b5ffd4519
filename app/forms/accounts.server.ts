/**
 * The zod schemas of the sign-in, users and members forms: one per intent,
 * parsed once by the route's action. Server-only, so zod stays out of the
 * browser bundle.
 */
import { z } from "zod";
import { EmailSchema, PasswordSchema } from "~/auth/accounts.server";
import { ROLES } from "../../db/schema";

export const LoginSchema = z.object({
  email: z.string().trim().min(1, "Enter your email address.").max(320),
  password: z.string().min(1, "Enter your password.").max(200),
  redirectTo: z.string().optional(),
});

const optionalId = z.preprocess((v) => (v === "" || v == null ? undefined : v), z.coerce.number().int().positive().optional());

/** The forms of the site admin's Users page. */
export const UserAction = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("create"),
    email: EmailSchema,
    name: z.string().trim().min(1, "Enter a name.").max(120),
    password: PasswordSchema,
    isSiteAdmin: z.literal("on").optional(),
    projectId: optionalId,
    role: z.enum(ROLES).default("annotator"),
  }),
  z.object({ intent: z.literal("reset-password"), userId: z.coerce.number().int().positive(), password: PasswordSchema }),
  z.object({ intent: z.literal("set-disabled"), userId: z.coerce.number().int().positive(), disabled: z.enum(["0", "1"]) }),
]);

/** The forms of a project's Members page. */
export const MemberAction = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("set-role"), userId: z.coerce.number().int().positive(), role: z.enum(ROLES) }),
  z.object({ intent: z.literal("remove"), userId: z.coerce.number().int().positive() }),
]);
