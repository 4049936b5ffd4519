/**
 * The forms of the Settings → API tokens page, one per intent. The token's own rules (name, scope, projects,
 * expiry) are the domain's NewTokenSchema (app/auth/tokens.server.ts), applied by createApiToken: this only
 * says which form was sent and reads its fields as the domain takes them.
 */
import { z } from "zod";

const blankAsMissing = (v: unknown) => (v === "" || v == null ? undefined : v);

export const TokenAction = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("create"),
    name: z.string().default(""),
    scope: z.string().default(""),
    /** "all": every project of the user, now and later; "some": the checked ones (projectId, repeated). */
    coverage: z.enum(["all", "some"]).default("all"),
    projectId: z.array(z.string()).default([]),
    expiresDays: z.preprocess(blankAsMissing, z.string().optional()),
  }),
  z.object({ intent: z.literal("revoke"), tokenId: z.coerce.number().int().positive() }),
]);
