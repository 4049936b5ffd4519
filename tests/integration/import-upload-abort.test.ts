/**
 * Issue 18, "abandoned uploads are deleted": an upload whose connection
 * drops half-way leaves no file in the uploads folder of the real server,
 * and the server keeps answering.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/app-server";
import { openDatabase } from "../../db/client";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { csrfToken, signInOverHttp } from "../../scripts/import-http";

const PASSWORD = "upload-abort-2026";
let app: RunningApp;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    await seedAnnotationScenario(db, { annotators: 1, items: 2, overlap: 1, password: PASSWORD, kinds: ["checklist-appropriateness"] });
    db.$client.close();
  });
}, 180_000);

afterAll(async () => {
  await app?.stop();
});

describe("an upload cut off half-way", () => {
  it("leaves nothing in the uploads folder", async () => {
    const base = app.url.replace("localhost", "127.0.0.1");
    const cookie = await signInOverHttp(base, "researcher@lab.test", PASSWORD);
    const csrf = await csrfToken(base, cookie);
    const uploads = path.join(path.dirname(app.databaseFile), "concord-uploads");
    const boundary = "----concordtestboundary";
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="intent"\r\n\r\nupload\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="preset"\r\n\r\nresponses\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\nitem,model,turn,text\r\n`;
    const url = new URL(`${base}/p/lab/import`);
    const declared = 50 * 1024 * 1024;
    let sawUpload = false;
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: {
          Cookie: cookie,
          Origin: base,
          "Content-Type": `multipart/form-data; boundary=${boundary}`,
          "Content-Length": String(declared),
        },
      });
      req.on("error", () => resolve());
      req.on("response", (res) => {
        res.resume();
        resolve();
      });
      req.write(head);
      const row = "syn-1,m,1,some text of a response\r\n".repeat(30_000); // ~1 MB of the declared 50
      req.write(row, () => {
        // Wait until the server has started writing the file, then drop the connection.
        const t0 = Date.now();
        const check = () => {
          const has = fs.existsSync(uploads) && fs.readdirSync(uploads).length > 0;
          if (has) sawUpload = true;
          if (has || Date.now() - t0 > 10_000) req.destroy();
          else setTimeout(check, 50);
        };
        check();
      });
    });
    expect(sawUpload).toBe(true); // the file had started streaming to disk
    // The server notices the dropped body and removes the partial upload (bounded wait).
    for (let i = 0; i < 200 && fs.existsSync(uploads) && fs.readdirSync(uploads).length > 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(fs.existsSync(uploads) ? fs.readdirSync(uploads) : []).toEqual([]);
    // …and keeps answering.
    const page = await fetch(`${base}/p/lab/import`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
  }, 120_000);
});
