/**
 * Issue 18, major 5: request bodies are limited by route before they are read.
 * Four parallel 300 MB posts to /login (signed out) are answered 413 without the
 * server buffering them: its resident memory stays bounded.
 */
import fs from "node:fs";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORM_BODY_LIMIT } from "../../app/request-limits.server";
import { AppClient, startApp, type RunningApp } from "../support/app-server";

let app: RunningApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  await app?.stop();
});

const rssMb = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${app.pid}/status`, "utf8"))![1]) / 1024;

/**
 * Streams up to `total` bytes at the server (declaring the length, or chunked)
 * and stops sending as soon as an answer arrives. Resolves with the status and
 * how many bytes were sent.
 */
function hugePost(pathname: string, total: number, cookie: string, declareLength: boolean): Promise<{ status: number; sent: number }> {
  const url = new URL(app.url + pathname);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request({
      host: "127.0.0.1",
      port: url.port,
      path: url.pathname,
      method: "POST",
      agent: false,
      headers: {
        Host: url.host,
        Origin: app.url,
        Cookie: cookie,
        "Content-Type": "application/x-www-form-urlencoded",
        ...(declareLength ? { "Content-Length": String(total) } : { "Transfer-Encoding": "chunked" }),
      },
    });
    req.on("response", (res) => {
      answered = true;
      res.resume();
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, sent });
      });
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    const chunk = Buffer.alloc(64 * 1024, "a");
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

describe("request-body limits", () => {
  it("four parallel 300 MB posts to /login get 413 and the server's memory stays bounded", async () => {
    const client = new AppClient(app.url);
    await client.csrfToken("/login");
    const cookie = client.cookieHeader();
    const before = rssMb();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 50);
    const total = 300 * 1024 * 1024;
    const results = await Promise.all([
      hugePost("/login", total, cookie, true),
      hugePost("/login", total, cookie, true),
      hugePost("/login", total, cookie, false),
      hugePost("/login", total, cookie, false),
    ]).finally(() => clearInterval(sampler));
    for (const r of results) {
      expect(r.status).toBe(413);
      // Answered long before the body was through (the socket may have buffered a few MB).
      expect(r.sent).toBeLessThan(total / 4);
    }
    // Buffering even one body would add 300 MB.
    expect(peak - before).toBeLessThan(100);
    // And the server still answers.
    expect((await client.get("/login")).status).toBe(200);
  });

  it("a form just over the limit is 413 with a short message, one under it is handled", async () => {
    const client = new AppClient(app.url);
    const over = await client.postForm("/login", { email: "a@b.c", password: "x".repeat(FORM_BODY_LIMIT) });
    expect(over.status).toBe(413);
    expect(over.text.length).toBeLessThan(200);
    const under = await client.postForm("/login", { email: "a@b.c", password: "x".repeat(1000) });
    expect(under.status).toBe(400); // the login form's own check: passwords are at most 200 characters
    expect(under.text).not.toContain("x".repeat(201));
  });

  it("JSON bodies nested too deep are 400, not 500", async () => {
    const client = new AppClient(app.url);
    const token = await client.csrfToken("/login");
    const deep = "[".repeat(5000) + "]".repeat(5000);
    const res = await client.request(
      "POST",
      "/login",
      { "Content-Type": "application/json", Origin: app.url, "X-CSRF-Token": token },
      deep,
    );
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/deeper than/);
  });
});
