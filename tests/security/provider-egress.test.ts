/**
 * Provider egress (SSRF): a provider's base URL cannot make the server POST, with the provider's key, to
 * loopback, private, link-local or cloud-metadata addresses unless CONCORD_EGRESS_ALLOW lists them; the
 * address is checked where the socket connects (after DNS), and what an upstream answers is shown masked and
 * cut to 200 characters, with one message for a refused, closed, unreachable or non-HTTP address.
 *
 * Real parts: a local HTTP server imitating an OpenAI-compatible endpoint (tests/support/fake-llm.ts), plain TCP
 * servers, the real openai client and fetch, `npm run providers`, `npm run worker` and the server as processes.
 * The test processes allow 127.0.0.1 (tests/support/setup.ts); a refusal here uses a policy of its own or starts
 * a process with CONCORD_EGRESS_ALLOW="".
 */
import net from "node:net";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { runBackCheck } from "../../app/curation/assist.server";
import {
  MAX_ERROR_CHARS,
  nonGlobalReason,
  parseEgressAllow,
  publicErrorText,
  UNREACHABLE,
  type LookupAll,
} from "../../app/runs/providers/egress.server";
import { createNodeFetch } from "../../app/runs/providers/node-fetch.server";
import { OpenAIProvider } from "../../app/runs/providers/openai.server";
import { seedDemo } from "../../seeds/demo";
import { startApp } from "../support/app-server";
import { runScript } from "../support/cli";
import { tempDir, useTempDatabase } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";

const KEY = "sk-internal-probe-SECRET-7731";
/** What an internal service answered: 6,000 characters, quoting the key and another bearer token at the start. */
const INTERNAL_BODY =
  `<html><title>admin console</title> rejected key ${KEY} (Authorization: Bearer internal-svc-token-0f9e8d7c) ` +
  "internal-detail ".repeat(400).slice(0, 6000 - 120) +
  "END-OF-INTERNAL-BODY";
const REFUSED = `connection error: ${UNREACHABLE} (after 1 attempt)`;

const { file, db } = useTempDatabase();
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm(() => "ready");
});
afterAll(() => fake?.close());

/** A provider at `baseUrl` under the allow-list `allow` (the process's own when undefined), no retries. */
const provider = (baseUrl: string, allow?: string, resolve?: LookupAll) =>
  new OpenAIProvider({
    baseUrl,
    apiKey: KEY,
    model: "m",
    maxRetries: 0,
    timeoutMs: 10_000,
    fetch: allow === undefined && !resolve ? undefined : createNodeFetch({ egress: parseEgressAllow(allow ?? ""), resolve }),
  });
const ask = (p: OpenAIProvider) => p.call({ kind: "chat", messages: [{ role: "user", content: "hi" }] });
/** The message a call fails with (the test fails if it succeeds). */
const failure = async (p: OpenAIProvider): Promise<string> => {
  const err = await ask(p).then(
    () => null,
    (e: Error) => e,
  );
  expect(err, "the call should have failed").toBeInstanceOf(Error);
  return err!.message;
};
const portOf = (u: string) => new URL(u).port;

describe("which addresses are not global (IANA special-purpose registries, RFC 6890 §2.2.2–2.2.3; RFC 4291)", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["fd12:3456::1", "unique local (private)"],
    ["169.254.169.254", "link-local (cloud metadata)"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["100.64.0.1", "shared (carrier-grade NAT)"],
    ["0.0.0.0", "this network"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "reserved (and broadcast)"],
    ["198.18.0.1", "benchmarking"],
    ["192.0.2.10", "documentation"],
    ["2001:db8::1", "documentation"],
    // IPv4 inside IPv6: checked as the IPv4 address it carries.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local (cloud metadata)"],
    ["64:ff9b::a9fe:a9fe", "link-local (cloud metadata)"],
    ["2002:a00:1::1", "private"],
    ["::127.0.0.1", "reserved (not global unicast)"],
  ])("%s is %s", (ip, reason) => {
    expect(nonGlobalReason(ip)).toBe(reason);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:808:808::1"])(
    "%s is global",
    (ip) => {
      expect(nonGlobalReason(ip)).toBeNull();
    },
  );
});

describe("CONCORD_EGRESS_ALLOW", () => {
  it("takes host names, addresses and CIDR blocks (IPv4 and IPv6); anything else is an error naming the entry", () => {
    const p = parseEgressAllow(" 127.0.0.1, ::1 ,10.0.0.0/8,fd00::/8, vLLM.Internal. ,");
    expect([...p.hosts]).toEqual(["vllm.internal"]);
    expect(p.blocks.check("10.200.3.4", "ipv4")).toBe(true);
    expect(p.blocks.check("127.0.0.1", "ipv4")).toBe(true);
    expect(p.blocks.check("127.0.0.2", "ipv4")).toBe(false);
    expect(p.blocks.check("fd00::5", "ipv6")).toBe(true);
    for (const bad of ["10.0.0.0/33", "::/129", "10.0.0.0/x", "http://vllm.internal", "*.internal", "10.0.0.1:8000", "a b"])
      expect(() => parseEgressAllow(bad), bad).toThrow(/is not a host name, an IP address or a CIDR block/);
    expect([...parseEgressAllow("").hosts]).toEqual([]);
  });

  it("an invalid value stops `npm run providers` (exit 1), the worker (exit 2) and the server (exit 1), naming the variable", async () => {
    const dir = tempDir();
    const badFile = path.join(dir, "bad-env.db");
    const bad = { DATABASE_URL: badFile, CONCORD_EGRESS_ALLOW: "127.0.0.1,10.0.0.0/33" };
    const message =
      /Invalid environment variable CONCORD_EGRESS_ALLOW: "10\.0\.0\.0\/33" is not a host name, an IP address or a CIDR block/;
    const cli = await runScript("providers", ["list", "--project", "x"], bad);
    expect(cli.code).toBe(1);
    expect(cli.err).toMatch(message);
    const worker = await runScript("worker", ["--until-idle"], bad);
    expect(worker.code).toBe(2);
    expect(worker.err).toMatch(message);
    const server = await startApp(undefined, { env: { CONCORD_EGRESS_ALLOW: bad.CONCORD_EGRESS_ALLOW } }).then(
      async (app) => {
        await app.stop();
        return "started";
      },
      (err: Error) => err.message,
    );
    expect(server).toMatch(/server exited with 1/);
    expect(server).toMatch(message);
  }, 90_000);
});

describe("connections are checked where they are made", () => {
  it("a provider on 127.0.0.1 is refused without the allow-list, and reached with it", async () => {
    fake.requests.length = 0;
    expect(await failure(provider(fake.baseUrl, ""))).toBe(REFUSED);
    expect(fake.requests).toHaveLength(0);
    expect((await ask(provider(fake.baseUrl, "127.0.0.1"))).text).toBe("ready");
    expect(fake.requests).toHaveLength(1);
  });

  it("a host name that resolves inside is refused at connect time (localhost via the system resolver, a name via a resolver of the test's)", async () => {
    fake.requests.length = 0;
    const port = portOf(fake.url);
    expect(await failure(provider(`http://localhost:${port}/v1`, ""))).toBe(REFUSED);
    // A public-looking name whose DNS answer (at the moment of connecting) is the loopback address.
    let lookups = 0;
    const rebinding: LookupAll = (_host, _opts, cb) => {
      lookups++;
      cb(null, [{ address: "127.0.0.1", family: 4 }]);
    };
    expect(await failure(provider(`http://api.provider.example:${port}/v1`, "", rebinding))).toBe(REFUSED);
    expect(lookups).toBe(1);
    expect(fake.requests).toHaveLength(0);
    // The operator may name the host itself; then it is reached whatever it resolves to.
    expect((await ask(provider(`http://api.provider.example:${port}/v1`, "api.provider.example", rebinding))).text).toBe("ready");
    // Of several answers only allowed ones are connected to.
    const mixed: LookupAll = (_h, _o, cb) =>
      cb(null, [
        { address: "10.0.0.7", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ]);
    expect((await ask(provider(`http://mixed.example:${port}/v1`, "127.0.0.0/8", mixed))).text).toBe("ready");
    expect(fake.requests).toHaveLength(2);
  });

  it("literal addresses are refused before any connection: the metadata address, IPv4-mapped and decimal loopback", async () => {
    fake.requests.length = 0;
    const port = portOf(fake.url);
    // 169.254.169.254 answers nothing here: were a connection attempted the call would wait for its timeout.
    const t0 = performance.now();
    for (const base of [
      "http://169.254.169.254/latest/meta-data",
      "http://[::ffff:169.254.169.254]/v1",
      `http://[::ffff:127.0.0.1]:${port}/v1`,
      `http://2130706433:${port}/v1`, // 127.0.0.1 written as one number (the URL parser normalises it)
      `http://0x7f.1:${port}/v1`,
    ])
      expect(await failure(provider(base, "127.0.0.2")), base).toBe(REFUSED);
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(fake.requests).toHaveLength(0);
    // The process's own allow-list (127.0.0.1,::1 in tests) does not include the metadata address either.
    expect(await failure(provider("http://169.254.169.254/v1"))).toBe(REFUSED);
  });
});

describe("redirects", () => {
  it("a provider's redirect is not followed (not to the metadata address, not to another server)", async () => {
    const other = await startFakeLlm(() => "followed");
    try {
      for (const location of [`${other.baseUrl}/chat/completions`, "http://169.254.169.254/latest/meta-data/iam"]) {
        fake.setScript(() => ({ status: 307, headers: { Location: location }, raw: "" }));
        expect(await failure(provider(fake.baseUrl, "127.0.0.1"))).toMatch(/^HTTP 307: /);
      }
      expect(other.requests).toHaveLength(0);
    } finally {
      fake.setScript(() => "ready");
      await other.close();
    }
  });
});

describe("what a user is told", () => {
  it("a refused address, a closed port and an open port that does not speak HTTP get the same message", async () => {
    const closed = net.createServer();
    await new Promise<void>((ok) => closed.listen(0, "127.0.0.1", ok));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    const sockets = new Set<net.Socket>();
    const ssh = net.createServer((s) => {
      sockets.add(s);
      s.end("SSH-2.0-OpenSSH_9.6\r\n");
    });
    await new Promise<void>((ok) => ssh.listen(0, "127.0.0.1", ok));
    const sshPort = (ssh.address() as net.AddressInfo).port;
    try {
      const refused = await failure(provider(fake.baseUrl, ""));
      const closedPortMessage = await failure(provider(`http://127.0.0.1:${closedPort}/v1`, "127.0.0.1"));
      const notHttp = await failure(provider(`http://127.0.0.1:${sshPort}/v1`, "127.0.0.1"));
      expect(refused).toBe(REFUSED);
      expect(closedPortMessage).toBe(REFUSED);
      expect(notHttp).toBe(REFUSED);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((ok) => ssh.close(ok));
    }
  });

  it("a 6,000-character error from an internal service shows at most 200 characters of it, the key and tokens masked", async () => {
    fake.setScript(() => ({ status: 502, headers: { "Content-Type": "text/html" }, raw: INTERNAL_BODY }));
    try {
      const calls: { error: string | null }[] = [];
      const err = await provider(fake.baseUrl, "127.0.0.1")
        .call({ kind: "chat", messages: [{ role: "user", content: "hi" }] }, { onCall: (c) => calls.push(c) })
        .then(
          () => null,
          (e: Error) => e.message,
        );
      const upstream = err!.replace(/ \(after 1 attempt\)$/, "");
      expect([...upstream].length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
      expect(upstream).toMatch(
        /^HTTP 502: 502 <html><title>admin console<\/title> rejected key sk-…\[key masked\] \(Authorization: Bearer …\[masked\]\) internal-detail/,
      );
      expect(upstream.endsWith("…")).toBe(true);
      expect(err).not.toContain(KEY);
      expect(err).not.toContain("internal-svc-token");
      expect(err).not.toContain("END-OF-INTERNAL-BODY");
      // The logged call (provider_calls.error) holds the same text.
      expect(calls[0].error).toBe(upstream);
    } finally {
      fake.setScript(() => "ready");
    }
  });

  it("control characters of an upstream error are not passed on (one line, no terminal escapes)", () => {
    expect(publicErrorText("line one\r\n\u001b[2J\u001b]0;owned\u0007 line two\ttab", [])).toBe("line one [2J ]0;owned line two tab");
  });
});

describe("end to end", () => {
  beforeAll(async () => {
    await seedDemo(db());
  });

  const addProvider = (name: string, baseUrl: string) =>
    db()
      .insert(schema.providers)
      .values({
        projectId: db().select().from(schema.projects).get()!.id,
        name,
        kind: "openai-compatible",
        baseUrl,
        apiKey: KEY, // a plaintext key (as an older version stored it) is used as is
        model: "judge",
        settings: { maxRetries: 0, timeoutMs: 10_000 },
      })
      .returning()
      .get();
  const slug = () => db().select().from(schema.projects).get()!.slug;

  it("`npm run providers -- test` reaches 127.0.0.1 only when allowed, and prints at most 200 characters of an internal error", async () => {
    addProvider("local", fake.baseUrl);
    fake.requests.length = 0;
    const cli = (env: Record<string, string>) =>
      runScript("providers", ["test", "--project", slug(), "--name", "local"], { DATABASE_URL: file, CONCORD_ENCRYPTION_KEY: "", ...env });

    const refused = await cli({ CONCORD_EGRESS_ALLOW: "" });
    expect(refused.code).toBe(1);
    expect(refused.err.trim()).toBe(`providers: test of local failed: ${REFUSED}`);
    expect(fake.requests).toHaveLength(0);

    const allowed = await cli({ CONCORD_EGRESS_ALLOW: "127.0.0.1" });
    expect(allowed.code, allowed.err).toBe(0);
    expect(allowed.out).toMatch(/reply: "ready"/);
    expect(fake.requests).toHaveLength(1);

    fake.setScript(() => ({ status: 500, headers: { "Content-Type": "text/plain" }, raw: INTERNAL_BODY }));
    try {
      const internal = await cli({ CONCORD_EGRESS_ALLOW: "127.0.0.1" });
      expect(internal.code).toBe(1);
      const shown = internal.err
        .trim()
        .replace(/^providers: test of local failed: /, "")
        .replace(/ \(after 1 attempt\)$/, "");
      expect([...shown].length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
      expect(shown).toMatch(/^HTTP 500: 500 <html>/);
      expect(internal.err).not.toContain(KEY);
      expect(internal.err).not.toContain("END-OF-INTERNAL-BODY");
      const logged = db().select().from(schema.providerCalls).all().at(-1)!;
      expect([...(logged.error ?? "")].length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
      expect(JSON.stringify(logged)).not.toContain(KEY);
    } finally {
      fake.setScript(() => "ready");
    }
  }, 60_000);

  it("the curation back-check never reaches the metadata address, and shows a failing internal service's error cut and masked", async () => {
    const project = db().select().from(schema.projects).get()!;
    const bench = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!;
    const metadata = addProvider("metadata", "http://169.254.169.254/latest/v1");
    const viaMetadata = await runBackCheck({ projectId: project.id, datasetId: bench.id, providerId: metadata.id, userId: null });
    expect(viaMetadata.checked).toBe(0);
    expect(viaMetadata.failedCalls.length).toBeGreaterThan(0);
    expect(new Set(viaMetadata.failedCalls.map((f) => f.error))).toEqual(new Set([REFUSED]));

    const internal = addProvider("internal", fake.baseUrl);
    fake.setScript(() => ({ status: 503, headers: { "Content-Type": "text/html" }, raw: INTERNAL_BODY }));
    try {
      const s = await runBackCheck({ projectId: project.id, datasetId: bench.id, providerId: internal.id, userId: null });
      expect(s.failedCalls.length).toBeGreaterThan(0);
      for (const f of s.failedCalls) {
        const upstream = f.error.replace(/ \(after 1 attempt\)$/, "");
        expect([...upstream].length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
        expect(upstream).toMatch(/^HTTP 503: 503 <html>.*rejected key sk-…\[key masked\]/);
        expect(f.error).not.toContain(KEY);
      }
      const logged = db().select().from(schema.providerCalls).where(eq(schema.providerCalls.providerId, internal.id)).all();
      expect(logged.length).toBe(s.failedCalls.length);
      for (const c of logged) expect([...(c.error ?? "")].length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    } finally {
      fake.setScript(() => "ready");
    }
  }, 60_000);
});
