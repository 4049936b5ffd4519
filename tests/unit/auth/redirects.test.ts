/**
 * The redirectTo rule (app/auth/redirects.ts) on its own: what it keeps, how it normalises,
 * and the edges the HTTP and Chromium table (tests/security/open-redirect.test.ts) does not
 * reach. Each refused target's browser reading is noted where it is not obvious (WHATWG URL
 * Standard §4.4: tabs and newlines removed, `\` read as `/` in http(s) URLs).
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_REDIRECT, REDIRECT_MAX_LENGTH, safeRedirect, sameOriginPath } from "../../../app/auth/redirects";

const ORIGIN = "http://concord.test";

describe("sameOriginPath", () => {
  it("keeps plain paths of ours with their query and fragment", () => {
    expect(sameOriginPath("/projects", ORIGIN)).toBe("/projects");
    expect(sameOriginPath("/p/demo/tasks?x=1", ORIGIN)).toBe("/p/demo/tasks?x=1");
    expect(sameOriginPath("/p/demo?tab=members#top", ORIGIN)).toBe("/p/demo?tab=members#top");
    // An encoded slash in the query is data, not a path.
    expect(sameOriginPath("/p/demo/tasks?next=%2Fp%2Fx", ORIGIN)).toBe("/p/demo/tasks?next=%2Fp%2Fx");
    // Any URL on our origin serves as the base (a loader passes request.url).
    expect(sameOriginPath("/projects", `${ORIGIN}/login?redirectTo=%2Fprojects`)).toBe("/projects");
  });

  it("returns the normalised path: dot segments resolved (RFC 3986 §5.2.4), characters percent-encoded", () => {
    expect(sameOriginPath("/p/demo/../other", ORIGIN)).toBe("/p/other");
    expect(sameOriginPath("/p/./demo", ORIGIN)).toBe("/p/demo");
    expect(sameOriginPath("/p/démo", ORIGIN)).toBe("/p/d%C3%A9mo");
  });

  it("refuses anything that is not a single-slash path: schemes, network paths, relative paths", () => {
    for (const target of ["https://evil.example", "javascript:alert(1)", "//evil.example", "evil.example", "p/demo", "?x=1", "#top", ""]) {
      expect(sameOriginPath(target, ORIGIN), target).toBeNull();
    }
  });

  it("refuses control characters, whitespace and backslashes anywhere, the query included", () => {
    for (const target of [
      "/\t/evil.example", // read as //evil.example
      "/p/demo?x=\n",
      "/p/\u007f",
      "/p/\u0085", // C1 control (NEL)
      "/p/demo?x=a b",
      "/\u2028/evil.example", // line separator
      "/\ufeff/evil.example", // byte order mark
      "/p\\demo",
      "/p/demo?x=\\",
    ]) {
      expect(sameOriginPath(target, ORIGIN), JSON.stringify(target)).toBeNull();
    }
  });

  it("refuses // in the path even once %2F and %5C are decoded, and encoded control characters", () => {
    for (const target of [
      "/%2F/evil.example",
      "/%2f%2fevil.example",
      "/%5Cevil.example",
      "/p//demo",
      "/.//evil.example",
      "/%09/evil.example",
      "/p/%00",
    ]) {
      expect(sameOriginPath(target, ORIGIN), target).toBeNull();
    }
  });

  it("refuses a malformed percent-escape in the path, a non-string, and a target longer than the limit", () => {
    expect(sameOriginPath("/p/100%", ORIGIN)).toBeNull();
    expect(sameOriginPath("/p/%E0%A4%A", ORIGIN)).toBeNull();
    expect(sameOriginPath(undefined, ORIGIN)).toBeNull();
    expect(sameOriginPath(["/projects"], ORIGIN)).toBeNull();
    expect(sameOriginPath(`/p/${"a".repeat(REDIRECT_MAX_LENGTH)}`, ORIGIN)).toBeNull();
    expect(sameOriginPath(`/${"a".repeat(REDIRECT_MAX_LENGTH - 1)}`, ORIGIN)).toBe(`/${"a".repeat(REDIRECT_MAX_LENGTH - 1)}`);
  });
});

describe("safeRedirect", () => {
  it("falls back to the project list, or to the fallback given", () => {
    expect(DEFAULT_REDIRECT).toBe("/projects");
    expect(safeRedirect("//evil.example", ORIGIN)).toBe("/projects");
    expect(safeRedirect(null, ORIGIN, "/p/demo")).toBe("/p/demo");
    expect(safeRedirect("/p/demo/tasks?x=1", ORIGIN)).toBe("/p/demo/tasks?x=1");
  });
});
