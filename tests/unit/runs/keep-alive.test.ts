import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FREE_SOCKET_MS, nodeFetch } from "../../../app/runs/providers/node-fetch.server";

// A real local server that closes idle connections after 4.5 s (Node's own default is 5 s): the provider's
// sockets must be let go before it does, or a request sent on a closing socket fails before it arrives.
let server: http.Server;
let url = "";
let connections = 0;
let delayMs = 0;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'), delayMs));
  });
  server.keepAliveTimeout = FREE_SOCKET_MS + 500;
  server.on("connection", () => connections++);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
});
afterAll(() => new Promise<void>((ok) => (server.closeAllConnections(), server.close(() => ok()))));

const post = () => nodeFetch(url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });

it("a kept-alive socket idle longer than the agent's limit is closed by us before the server's, and a reply slower than the limit still arrives", async () => {
  expect((await post()).status).toBe(200);
  expect((await post()).status).toBe(200);
  // Reused while busy: one connection for both.
  expect(connections).toBe(1);
  // Idle past our limit but before the server's: the next request opens a new connection and succeeds.
  await new Promise((ok) => setTimeout(ok, FREE_SOCKET_MS + 300));
  expect((await post()).status).toBe(200);
  expect(connections).toBe(2);
  // A reply that takes longer than the limit (a long generation) is not cut: only free sockets are closed.
  delayMs = FREE_SOCKET_MS + 300;
  const r = await post();
  expect(r.status).toBe(200);
  expect(await r.json()).toEqual({ ok: true });
}, 20_000);
