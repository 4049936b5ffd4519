/**
 * Drives the import page over HTTP the way the browser does (upload →
 * preview → confirm, polling the page's data for the job's progress), for
 * `npm run bench:annotate -- --with-import` and the load test. Also writes
 * the synthetic responses file both use.
 */
import fs from "node:fs";

const ROUTE = "routes/p.$slug.import";

/** A responses CSV with items × models rows (item IDs syn-1…syn-items, as app/annotation/synthetic.server.ts makes them). */
export function writeResponsesFile(file: string, items: number, models: number): number {
  const out = fs.openSync(file, "w");
  try {
    fs.writeSync(out, "item,model,turn,text\n");
    let rows = 0;
    let chunk = "";
    for (let m = 1; m <= models; m++) {
      for (let i = 1; i <= items; i++) {
        chunk += `syn-${i},bench-model-${m},1,"Answer of bench model ${m} to problem ${i}: first a short plan, then the steps, ""quoted"" once, and a conclusion."\n`;
        rows++;
        if (chunk.length > 1 << 20) {
          fs.writeSync(out, chunk);
          chunk = "";
        }
      }
    }
    fs.writeSync(out, chunk);
    return rows;
  } finally {
    fs.closeSync(out);
  }
}

/** The session's CSRF token from the root loader's data ("" when the app has none). */
export async function csrfToken(base: string, cookie: string): Promise<string> {
  const res = await fetch(`${base}/?_data=root`, { headers: { Cookie: cookie } });
  if (!res.ok) return "";
  const data = (await res.json().catch(() => ({}))) as { csrf?: string };
  return data.csrf ?? "";
}

/**
 * Signs in through /login as a browser does: the sign-in page's CSRF token
 * (bound to a pre-session cookie), then the form. Returns the session cookie.
 */
export async function signInOverHttp(base: string, email: string, password: string): Promise<string> {
  const host = new URL(base).host;
  const page = await fetch(`${base}/login?_data=root`);
  const pre = page.headers.get("set-cookie")?.split(";")[0] ?? "";
  const token = ((await page.json().catch(() => ({}))) as { csrf?: string }).csrf ?? "";
  const body = new URLSearchParams(token ? { _csrf: token, email, password } : { email, password });
  const login = await fetch(`${base}/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base, Host: host, ...(pre ? { Cookie: pre } : {}) },
    body,
  });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .find((c) => !c.startsWith("concord_presession=") && !/=$/.test(c));
  if (login.status !== 302 || !cookie) throw new Error(`sign-in failed for ${email}: ${login.status}`);
  return cookie;
}

export type ImportOutcome = {
  previewSeconds: number;
  confirmSeconds: number;
  summary: { errorCount: number; responses: number; newRows: number; committed: boolean; lockMs: number; [k: string]: unknown };
  problems: string[];
  polls: number;
};

type JobData = {
  upload: null | {
    job: null | {
      state: string;
      kind: string;
      percent?: number;
      message?: string;
      summary?: ImportOutcome["summary"];
      problems?: string[];
    };
  };
};

/** Upload, preview, confirm; resolves when the import is written (or throws with the page's message). */
export async function importOverHttp(
  base: string,
  cookie: string,
  o: { slug: string; preset: string; file: string; fileName: string; fields?: Record<string, string> },
): Promise<ImportOutcome> {
  const host = new URL(base).host;
  const page = `${base}/p/${o.slug}/import`;
  const csrf = await csrfToken(base, cookie);
  const form = new FormData();
  if (csrf) form.append("_csrf", csrf); // first, before the file
  form.append("intent", "upload");
  form.append("preset", o.preset);
  form.append("file", await fs.openAsBlob(o.file), o.fileName);
  const up = await fetch(page, { method: "POST", redirect: "manual", headers: { Cookie: cookie, Origin: base, Host: host }, body: form });
  if (up.status !== 302) throw new Error(`upload answered ${up.status}: ${(await up.text()).slice(0, 300)}`);
  const token = new URL(up.headers.get("Location")!, base).searchParams.get("upload")!;
  let polls = 0;
  const post = async (fields: Record<string, string>) => {
    const body = new URLSearchParams(csrf ? { _csrf: csrf, ...fields } : fields);
    const r = await fetch(page, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: cookie, Origin: base, Host: host, "Content-Type": "application/x-www-form-urlencoded" },
      body,
    });
    if (r.status !== 302) throw new Error(`${fields.intent} answered ${r.status}: ${(await r.text()).slice(0, 300)}`);
  };
  const settle = async (kind: string) => {
    for (;;) {
      const r = await fetch(`${page}?upload=${token}&_data=${encodeURIComponent(ROUTE)}`, { headers: { Cookie: cookie } });
      if (r.status !== 200) throw new Error(`polling answered ${r.status}`);
      polls++;
      const d = (await r.json()) as JobData;
      const job = d.upload?.job;
      if (job && job.kind === kind && job.state === "failed") throw new Error(`the ${kind} failed: ${job.message}`);
      if (job && job.kind === kind && job.state === "done") return job as Required<NonNullable<typeof job>>;
      await new Promise((res) => setTimeout(res, 250));
    }
  };
  const t0 = performance.now();
  await post({ intent: "preview", token, ...(o.fields ?? {}) });
  const preview = await settle("preview");
  const previewSeconds = (performance.now() - t0) / 1000;
  if (preview.summary.errorCount) throw new Error(`the preview found problems: ${preview.problems.slice(0, 3).join("; ")}`);
  const t1 = performance.now();
  await post({ intent: "confirm", token });
  const done = await settle("confirm");
  return { previewSeconds, confirmSeconds: (performance.now() - t1) / 1000, summary: done.summary, problems: done.problems, polls };
}
