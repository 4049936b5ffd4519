/**
 * Access control, proven for every route file in app/routes: a non-member gets
 * 404 from every page and action of a project, a lower role gets 403, and
 * site-admin pages refuse everyone else. A new route file without an entry
 * here fails the first test.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { addMember, makeDataset, makeProject, makeUser } from "../support/factory";
import { args, get, post, run, signInCookie } from "../support/http";
import type { Role } from "../../db/schema";
import type { Entry, Ids, Setup } from "../support/access/types";

useTempDatabase();

/**
 * Each area of the app lists its routes in tests/support/access/<area>.ts as
 * `export const ROUTES: Record<string, Entry>`; they are merged here.
 */
const areas = Object.values(import.meta.glob<{ ROUTES?: Record<string, Entry>; setup?: Setup }>("../support/access/*.ts", { eager: true }));
const ROUTES: Record<string, Entry> = Object.assign({}, ...areas.map((m) => m.ROUTES ?? {}));

const routeDir = path.resolve(__dirname, "../../app/routes");
const routeFiles = fs.readdirSync(routeDir).filter((f) => /\.tsx?$/.test(f));

let ids: Ids;
const cookies: Record<"outsider" | "siteAdmin" | Role, string> = {} as never;

beforeAll(async () => {
  const project = makeProject("access");
  const { dataset, item, checklistItem, response } = makeDataset(project.id);
  const target = await makeUser();
  await addMember(project.id, target.id, "annotator");
  ids = {
    slug: project.slug,
    projectId: project.id,
    datasetId: dataset.id,
    itemId: item.id,
    checklistItemId: checklistItem.id,
    responseId: response.id,
    userId: target.id,
  };
  for (const area of areas) if (area.setup) Object.assign(ids, await area.setup(ids));
  for (const role of ["annotator", "researcher", "admin"] as const) {
    const u = await makeUser();
    await addMember(project.id, u.id, role);
    cookies[role] = await signInCookie(u.email, u.password);
  }
  const outsider = await makeUser();
  cookies.outsider = await signInCookie(outsider.email, outsider.password);
  const siteAdmin = await makeUser({ isSiteAdmin: true });
  cookies.siteAdmin = await signInCookie(siteAdmin.email, siteAdmin.password);
});

const RANK: Record<Role, number> = { annotator: 1, researcher: 2, admin: 3 };

async function load(file: string) {
  return (await import(path.join(routeDir, file))) as {
    loader?: Parameters<typeof run>[0];
    action?: Parameters<typeof run>[0];
  };
}

describe("access control", () => {
  it("covers every route file", () => {
    expect(routeFiles.sort()).toEqual(Object.keys(ROUTES).sort());
  });

  for (const [file, entry] of Object.entries(ROUTES)) {
    if (entry.access === "public") continue;

    if (entry.access === "api") {
      it(`${file}: no session opens it, not even a site admin's: 401, loader and action`, async () => {
        const mod = await load(file);
        for (const who of [null, "outsider", "annotator", "researcher", "admin", "siteAdmin"] as const) {
          const cookie = who ? cookies[who] : undefined;
          const res = await run(mod.loader!, args(get(entry.path(ids), cookie), entry.params(ids)));
          expect([res.status, res.headers.get("Content-Type")], `${who ?? "signed out"} loading ${file}`).toEqual([
            401,
            "application/problem+json",
          ]);
          if (mod.action) {
            const req = post(entry.path(ids), entry.form?.(ids) ?? {}, cookie);
            expect((await run(mod.action, args(req, entry.params(ids)))).status).toBe(401);
          }
        }
      });
      continue;
    }

    it(`${file}: signed-out visitors are sent to /login`, async () => {
      const mod = await load(file);
      const res = await run(mod.loader!, args(get(entry.path(ids)), entry.params(ids)));
      expect(res.status).toBe(302);
      expect(res.headers.get("Location")).toMatch(/^\/login\?redirectTo=/);
    });

    if (entry.access === "site-admin") {
      it(`${file}: 403 for everyone but site admins`, async () => {
        const mod = await load(file);
        for (const who of ["outsider", "annotator", "researcher", "admin"] as const) {
          expect((await run(mod.loader!, args(get(entry.path(ids), cookies[who]), entry.params(ids)))).status).toBe(403);
          if (mod.action && entry.form) {
            const req = post(entry.path(ids), entry.form(ids), cookies[who]);
            expect((await run(mod.action, args(req, entry.params(ids)))).status).toBe(403);
          }
        }
        expect((await run(mod.loader!, args(get(entry.path(ids), cookies.siteAdmin), entry.params(ids)))).status).toBe(200);
      });
      continue;
    }

    if (entry.access === "user") continue;
    const min = entry.access;

    it(`${file}: 404 for a signed-in non-member, loader and action`, async () => {
      const mod = await load(file);
      const res = await run(mod.loader!, args(get(entry.path(ids), cookies.outsider), entry.params(ids)));
      expect(res.status).toBe(404);
      if (mod.action) {
        const req = post(entry.path(ids), entry.form?.(ids) ?? {}, cookies.outsider);
        expect((await run(mod.action, args(req, entry.params(ids)))).status).toBe(404);
      }
      // An unknown project answers exactly the same.
      const other = { ...entry.params(ids), slug: "no-such-project" };
      expect((await run(mod.loader!, args(get(entry.path(ids), cookies.admin), other))).status).toBe(404);
    });

    it(`${file}: 403 below ${min}, 200 at ${min} and above`, async () => {
      const mod = await load(file);
      for (const role of ["annotator", "researcher", "admin"] as const) {
        const res = await run(mod.loader!, args(get(entry.path(ids), cookies[role]), entry.params(ids)));
        if (role === "annotator" && entry.annotatorRedirect && RANK[role] >= RANK[min]) {
          expect(res.status, `${role} loading ${file}`).toBe(302);
          expect(res.headers.get("Location")).toBe(entry.annotatorRedirect(ids));
        } else {
          expect(res.status, `${role} loading ${file}`).toBe(RANK[role] >= RANK[min] ? 200 : 403);
        }
        if (mod.action && entry.form && RANK[role] < RANK[min]) {
          const req = post(entry.path(ids), entry.form(ids), cookies[role]);
          expect((await run(mod.action, args(req, entry.params(ids)))).status).toBe(403);
        }
      }
      expect((await run(mod.loader!, args(get(entry.path(ids), cookies.siteAdmin), entry.params(ids)))).status).toBe(200);
    });
  }
});

describe("blinding on shared pages", () => {
  it("an annotator opening the project overview is sent to their task list and gets no counts", async () => {
    const mod = await load("p.$slug._index.tsx");
    const res = await run(mod.loader!, args(get(`/p/${ids.slug}`, cookies.annotator), { slug: ids.slug }));
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe(`/p/${ids.slug}/tasks`);
    expect(await res.text()).not.toMatch(/Model-X|responses|verdicts/);
  });
});
