/**
 * Where provider requests may go (outbound requests, SSRF). A provider's base
 * URL is typed by a project's researcher, and the server POSTs there with the
 * provider's key; left unchecked, that reaches the machine's own services, the
 * private network and the cloud metadata endpoint (169.254.169.254).
 *
 * Rule: a request may connect only to a globally routable address, unless the
 * operator lists the host or a block of addresses in CONCORD_EGRESS_ALLOW
 * (comma-separated host names, IP addresses and CIDR blocks, IPv4 and IPv6;
 * checked once at start, app/env.server.ts). The address is checked where the
 * connection is made — in the DNS lookup the socket uses, and for a literal IP
 * before the request — so a name that resolves (or later re-resolves) to an
 * inside address is refused too.
 *
 * Not global: the special-purpose blocks of the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 §2.2.2 and §2.2.3, with RFC 6598
 * shared address space, RFC 4193 unique local, RFC 4291 §2.5.6 link-local and
 * §2.7 multicast), every IPv6 address outside 2000::/3 (RFC 4291 §2.4: the only
 * block allocated for global unicast), and the IPv4 address inside an
 * IPv4-mapped (RFC 4291 §2.5.5.2), NAT64 (RFC 6052 §2.1) or 6to4 (RFC 3056 §2)
 * IPv6 address is checked as that IPv4 address.
 *
 * A refused address fails like an unreachable one: the same connection error,
 * retried the same way (UNREACHABLE is all a user sees of either). The
 * process's policy is read in node-fetch.server.ts; this module holds the rules.
 */
import dns from "node:dns";
import net from "node:net";

/** What a user sees when a provider's address is refused, unreachable, closed, or not speaking HTTP: one text for all. */
export const UNREACHABLE =
  "could not reach the provider (connection refused or failed, address unreachable, or not allowed by CONCORD_EGRESS_ALLOW)";

/** The most of an upstream error a user is shown or the database keeps (characters). */
export const MAX_ERROR_CHARS = 200;

export class EgressConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EgressConfigError";
  }
}

/** The operator's allow-list: host names (as written in a base URL) and address blocks. */
export type EgressPolicy = { readonly hosts: ReadonlySet<string>; readonly blocks: net.BlockList; readonly text: string };

/** The 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail and a %zone allowed), or null. */
function ipv6Groups(ip: string): number[] | null {
  let s = ip.replace(/%.*$/, "");
  if (!net.isIPv6(s)) return null;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const b = tail[1].split(".").map(Number);
    s = `${s.slice(0, -tail[1].length)}${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const [head, rest] = s.split("::") as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  if (rest === undefined) return h.length === 8 ? h : null;
  const r = parse(rest);
  return [...h, ...new Array<number>(8 - h.length - r.length).fill(0), ...r];
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The address as it is routed: an IPv4 address carried in an IPv4-mapped or NAT64 (well-known prefix) IPv6
 * address becomes that IPv4 address; anything else is returned as given (without an IPv6 zone).
 */
export function canonicalAddress(ip: string): { address: string; family: 4 | 6 } {
  if (net.isIPv4(ip)) return { address: ip, family: 4 };
  const g = ipv6Groups(ip);
  if (!g) return { address: ip, family: 6 };
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(5) && g[5] === 0xffff) return { address: v4(g[6], g[7]), family: 4 }; // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return { address: v4(g[6], g[7]), family: 4 }; // 64:ff9b::/96
  return { address: ip.replace(/%.*$/, ""), family: 6 };
}

/** [block, prefix, what it is] — the address ranges that are not global (see the header for the sources). */
const NOT_GLOBAL_V4: [string, number, string][] = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (carrier-grade NAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved (and broadcast)"],
];
/** Inside 2000::/3 (everything outside it is refused in nonGlobalReason). */
const NOT_GLOBAL_V6: [string, number, string][] = [
  ["2001::", 23, "IETF protocol assignments (Teredo among them)"],
  ["2001:db8::", 32, "documentation"],
  ["3fff::", 20, "documentation"],
];
const lists = new Map<string, net.BlockList>();
for (const [block, prefix, what] of [...NOT_GLOBAL_V4, ...NOT_GLOBAL_V6]) {
  const list = lists.get(what) ?? new net.BlockList();
  list.addSubnet(block, prefix, net.isIPv4(block) ? "ipv4" : "ipv6");
  lists.set(what, list);
}

/**
 * Why an address is not global ("loopback", "private", "link-local (cloud metadata)", …), or null for a
 * global unicast address. Anything that is not an IP address is "not an IP address".
 */
export function nonGlobalReason(ip: string): string | null {
  if (!net.isIP(ip.replace(/%.*$/, ""))) return "not an IP address";
  const { address, family } = canonicalAddress(ip);
  if (family === 6) {
    const g = ipv6Groups(address)!;
    if (g.every((x) => x === 0)) return "unspecified";
    if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
    if (g[0] === 0x2002) return nonGlobalReason(v4(g[1], g[2])); // 6to4: the IPv4 address it carries
    if ((g[0] & 0xfe00) === 0xfc00) return "unique local (private)";
    if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
    if ((g[0] & 0xff00) === 0xff00) return "multicast";
    if ((g[0] & 0xe000) !== 0x2000) return "reserved (not global unicast)";
  }
  for (const [what, list] of lists) if (list.check(address, family === 4 ? "ipv4" : "ipv6")) return what;
  return null;
}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A host as a URL names it: lower case, without IPv6 brackets or a trailing dot. */
export const normalHost = (host: string): string =>
  host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");

/**
 * Parses CONCORD_EGRESS_ALLOW: comma-separated host names (`vllm.internal`, `localhost`), IP addresses
 * (`127.0.0.1`, `::1`) and CIDR blocks (`10.0.0.0/8`, `fd00::/8`). Empty or unset: nothing beyond global
 * addresses. Throws an EgressConfigError naming the entry that is none of these.
 */
export function parseEgressAllow(text: string | undefined): EgressPolicy {
  const hosts = new Set<string>();
  const blocks = new net.BlockList();
  for (const raw of (text ?? "").split(",")) {
    const entry = raw.trim();
    if (!entry) continue;
    const bad = () =>
      new EgressConfigError(
        `"${entry.slice(0, 100)}" is not a host name, an IP address or a CIDR block (e.g. 127.0.0.1,10.0.0.0/8,vllm.internal)`,
      );
    const slash = entry.indexOf("/");
    if (slash >= 0) {
      const ip = entry.slice(0, slash);
      const bits = entry.slice(slash + 1);
      const family = net.isIP(ip);
      if (!family || !/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) throw bad();
      blocks.addSubnet(ip, Number(bits), family === 4 ? "ipv4" : "ipv6");
      // An IPv4 block also covers the same addresses written IPv4-mapped; canonicalAddress maps those back.
      continue;
    }
    const host = normalHost(entry);
    if (net.isIP(host)) {
      const c = canonicalAddress(host);
      blocks.addAddress(c.address, c.family === 4 ? "ipv4" : "ipv6");
    } else if (HOST_NAME.test(host)) hosts.add(host);
    else throw bad();
  }
  return { hosts, blocks, text: text ?? "" };
}

/** May a connection to `host` (as the URL names it) go to the address `ip`? */
export function egressAllowed(policy: EgressPolicy, host: string, ip: string): boolean {
  if (policy.hosts.has(normalHost(host))) return true;
  const c = canonicalAddress(ip);
  if (net.isIP(c.address) && policy.blocks.check(c.address, c.family === 4 ? "ipv4" : "ipv6")) return true;
  return nonGlobalReason(ip) === null;
}

/** The error a refused connection fails with (the openai client reports it as a connection error, like any other). */
export function refusedError(): Error {
  return Object.assign(new Error("connect EGRESS_REFUSED"), { code: "EGRESS_REFUSED" });
}

export type LookupAll = (
  hostname: string,
  options: dns.LookupAllOptions,
  cb: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for net.connect (through http.request's options) that resolves with `resolve` (default
 * dns.lookup) and keeps only the addresses the policy allows; none left is a refused connection. Net calls
 * it for every new socket to a host name, so the address checked is the one connected to.
 */
export function guardedLookup(policy: EgressPolicy, resolve: LookupAll = dns.lookup as LookupAll): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions | number | undefined, callback: (...args: unknown[]) => void) => {
    const opts: dns.LookupOptions = typeof options === "number" ? { family: options } : { ...(options ?? {}) };
    resolve(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const ok = (addresses ?? []).filter((a) => egressAllowed(policy, hostname, a.address));
      if (ok.length === 0) return callback(refusedError());
      if (opts.all) callback(null, ok);
      else callback(null, ok[0].address, ok[0].family);
    });
  }) as net.LookupFunction;
}

/** Checks a URL's host when it is a literal IP address (net.connect does no lookup for one); true when allowed or not literal. */
export function literalHostAllowed(policy: EgressPolicy, url: URL): boolean {
  const host = normalHost(url.hostname);
  return !net.isIP(host) || egressAllowed(policy, host, host);
}

/**
 * An upstream error as a user may see it: the given secrets (the API key) and anything shaped like a bearer
 * token or an `sk-…` key masked, control characters and runs of white space made one space, and at most
 * MAX_ERROR_CHARS characters (cut ones end in "…").
 */
export function publicErrorText(text: string, secrets: readonly (string | null | undefined)[] = []): string {
  let t = String(text);
  for (const s of secrets) t = maskSecret(t, s);
  t = t
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}/gi, "$1 …[masked]")
    .replace(/\bsk-[A-Za-z0-9_-]{8,}/g, "sk-…[key masked]")
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, " ")
    .trim();
  const chars = [...t];
  return chars.length > MAX_ERROR_CHARS ? `${chars.slice(0, MAX_ERROR_CHARS - 1).join("")}…` : t;
}

/** Replaces every occurrence of the secret in a text (a provider error that echoes the key) with a masked form. */
export function maskSecret(text: string, secret: string | null | undefined): string {
  if (!secret || secret.length < 4 || !text) return text;
  const masked = `${secret.slice(0, Math.min(3, Math.floor(secret.length / 4)))}…[key masked]`;
  return text.split(secret).join(masked);
}
