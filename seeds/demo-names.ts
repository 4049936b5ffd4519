/**
 * The demo's project, accounts and recorded run by name: what the README lists and the tests sign in with, in a
 * module of their own that imports nothing, so a test that only needs an account's email and password does not
 * load the seeding code (seeds/demo.ts re-exports them).
 */
export const DEMO_PROJECT = { slug: "demo", name: "Concord Demo", description: "Original demo benchmark and labels written for Concord." };

export const DEMO_ACCOUNTS = [
  { email: "admin@concord.test", name: "Avery Admin", password: "demo-admin-2026", isSiteAdmin: true, role: "admin" },
  { email: "rhea@concord.test", name: "Rhea Researcher", password: "demo-research-2026", isSiteAdmin: false, role: "researcher" },
  { email: "ana@concord.test", name: "Ana Annotator", password: "demo-annotate-ana", isSiteAdmin: false, role: "annotator" },
  { email: "ben@concord.test", name: "Ben Annotator", password: "demo-annotate-ben", isSiteAdmin: false, role: "annotator" },
  { email: "chen@concord.test", name: "Chen Annotator", password: "demo-annotate-chen", isSiteAdmin: false, role: "annotator" },
] as const;
export const DEMO_RUN_DATASET = "Concord Demo Bench — recorded run sample";
export const DEMO_RUN_NAME = "Demo: RefineBench self-refinement (recorded outputs)";
