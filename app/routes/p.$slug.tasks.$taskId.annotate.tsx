/**
 * Labelling one unit. GET ?unit=<id> opens one of the user's own units (404
 * for any other); without it, the next unlabelled one. POST saves a draft,
 * submits or skips. Loader data is blind: texts, shown letters, own labels.
 */
import { randomUUID } from "node:crypto";
import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction, SerializeFrom } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import {
  Link,
  useActionData,
  useLoaderData,
  useParams,
  type ClientLoaderFunctionArgs,
  type ShouldRevalidateFunction,
} from "@remix-run/react";
import { annotatePageData, nextUnitId, progress, saveAnnotation, type SaveIntent } from "~/annotation/annotate.server";
import { nextTaskWithWork } from "~/annotation/queue.server";
import { findTask } from "~/annotation/tasks.server";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { AnnotateForm } from "~/components/AnnotateForm";
import { Markdown, markdownLinks } from "~/components/Markdown";
import { ProgressBar } from "~/components/ProgressBar";
import styles from "~/components/annotation.css";
import { sql } from "drizzle-orm";
import { dalOf, first, getDal } from "~/dal.server";
import { isAnnotatable, kindTitle } from "~/task-kinds/registry.server";
import { loadKindForm } from "~/task-kinds/form-registry";
import type { KindPartsHandle } from "~/task-kinds/parts-handle";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }, ...markdownLinks];
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.task.name ?? "Annotate"} · Concord` }];

async function context(request: Request, params: { slug?: string; taskId?: string }) {
  const access = await requireProjectRole(request, params.slug, "annotator");
  const task = await findTask(access.project.id, Number(params.taskId));
  if (!task || !isAnnotatable(task.kind)) notFound("Task not found.");
  return { ...access, task };
}

/**
 * Whether the text of the user's unit changed after they labelled it: their latest
 * submitted revision is marked stale (the queue's rule, so page and queue agree).
 */
async function staleForMe(taskId: number, unitId: number, userId: number): Promise<boolean> {
  const d = dalOf(getDal());
  const { annotations, assignments, units } = d.t;
  const row = first(
    await d.rows<{ staleAt: number | string | null }>(sql`select an.stale_at as "staleAt" from ${annotations} an
    join ${assignments} a on a.id = an.assignment_id join ${units} u on u.id = a.unit_id
    where u.task_id = ${taskId} and a.unit_id = ${unitId} and a.annotator_id = ${userId} and an.status = 'submitted'
    order by an.revision desc limit 1`),
  );
  return row?.staleAt != null;
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { user, task } = await context(request, params);
  const url = new URL(request.url);
  const requested = url.searchParams.get("unit");
  const unitId = requested != null ? Number(requested) : await nextUnitId(task.id, user.id);
  const base = {
    task: {
      name: task.name,
      kind: task.kind,
      kindTitle: kindTitle(task.kind),
      guidelines: task.guidelines,
      closed: task.status !== "open",
    },
    progress: await progress(task.id, user.id),
  };
  if (unitId == null) {
    // (same keys in both answers, so the page's types stay simple)
    // Nothing left here: point to the next of the user's own open tasks that has work.
    return json({
      ...base,
      page: null,
      stale: false,
      clientToken: null,
      openedAt: null,
      nextTask: await nextTaskWithWork(task.projectId, user.id, task.id),
    });
  }
  const page = await annotatePageData(task, unitId, user.id);
  // Another annotator's unit, an unknown unit, or a unit of another task: not found.
  if (!page) notFound("This unit is not in your queue.");
  return json({
    ...base,
    page,
    stale: await staleForMe(task.id, unitId, user.id),
    clientToken: randomUUID() as string | null,
    openedAt: Date.now() as number | null,
    nextTask: null,
  });
}

/** The kind part this page renders (see app/task-kinds/parts-handle.ts): loaded before hydration and before a client navigation renders. */
export const handle: KindPartsHandle<SerializeFrom<typeof loader>> = {
  kindParts: (data) => loadKindForm(data.task.kind),
};

export async function clientLoader({ serverLoader }: ClientLoaderFunctionArgs) {
  const data = await serverLoader<typeof loader>();
  await handle.kindParts(data);
  return data;
}

const INTENTS = new Set<SaveIntent>(["draft", "submit", "skip"]);

export async function action({ request, params }: ActionFunctionArgs) {
  const { user, task } = await context(request, params);
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "submit") as SaveIntent;
  if (!INTENTS.has(intent))
    return json({ ok: false, fieldErrors: { form: `Unknown intent "${String(intent).slice(0, 20)}".` }, values: {} }, { status: 400 });
  const unitId = Number(form.get("unitId") ?? new URL(request.url).searchParams.get("unit"));
  // One transaction; a held write lock (an import's chunk) is waited for on a timer (the data-access layer), never in SQLite's busy handler.
  const result = await saveAnnotation({ task, userId: user.id, unitId, intent, form });
  if (!result.ok) {
    const values: Record<string, string> = {};
    for (const [k, v] of form.entries())
      if (typeof v === "string" && (/^(answer|comment|best|skipReason)$/.test(k) || /^(score|reason|note)\.[A-Z]$/.test(k))) values[k] = v;
    return json({ ok: false, fieldErrors: result.fieldErrors, values }, { status: result.httpStatus });
  }
  if (intent === "draft" && request.headers.get("Accept")?.includes("text/html") !== true) {
    return json({ ok: true, fieldErrors: {} as Record<string, string>, values: {} as Record<string, string> });
  }
  if (intent === "draft") return redirect(`${new URL(request.url).pathname}?unit=${unitId}`);
  // "Submit revision and continue": back to where the annotator was going, inside this project only.
  const wanted = form.get("next");
  if (typeof wanted === "string" && safeReturnPath(wanted, params.slug ?? "")) return redirect(wanted);
  const next = await nextUnitId(task.id, user.id, unitId);
  return redirect(next != null ? `${new URL(request.url).pathname}?unit=${next}` : new URL(request.url).pathname);
}

/** A path of this project's pages (no scheme, no host, no "//", no backslash, no dot segments). */
function safeReturnPath(path: string, slug: string): boolean {
  if (path.length > 300 || !path.startsWith(`/p/${slug}/`)) return false;
  if (/[\\\s]|\/\/|\/\.\.?(\/|$|\?)/.test(path)) return false;
  return /^\/p\/[A-Za-z0-9._~\-/]+(\?[A-Za-z0-9._~\-=&%]*)?$/.test(path);
}

export const shouldRevalidate: ShouldRevalidateFunction = ({ formData, actionStatus, defaultShouldRevalidate }) => {
  if (formData?.get("intent") === "draft") return false;
  // A refused save changed nothing: keep the page (and what is being typed into it).
  if (actionStatus != null && actionStatus >= 400 && actionStatus < 500) return false;
  return defaultShouldRevalidate;
};

export default function Annotate() {
  const data = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const { task, progress } = data;
  const { slug, taskId } = useParams();
  const base = `/p/${slug}/tasks/${taskId}`;
  const page = data.page;
  const prevHref = page?.position.prev != null ? `${base}/annotate?unit=${page.position.prev}` : null;
  const nextHref = page?.position.next != null ? `${base}/annotate?unit=${page.position.next}` : null;
  return (
    <div className="annotate-page">
      <div className="annotate-head">
        <h1>{task.name}</h1>
        <span className="muted">
          {task.kindTitle} · <Link to={`${base}/queue`}>Queue</Link>
        </span>
      </div>
      <ProgressBar label="Your progress" done={progress.mine.done} total={progress.mine.total} testId="progress-mine" />
      {/* Works without JavaScript; with it, G opens the same text in a panel beside the work. */}
      <details className="guidelines-inline" data-testid="guidelines-details">
        <summary>Guidelines</summary>
        <Markdown>{task.guidelines || "_No guidelines for this task._"}</Markdown>
      </details>
      {page ? (
        <>
          <nav className="unit-nav small muted" aria-label="Units">
            <span>
              Unit {page.position.index} of {page.position.total}
              {page.status !== "pending" ? ` · ${page.status}` : ""}
              {page.revision > 1 ? ` · revision ${page.revision}` : ""}
            </span>
            {prevHref ? (
              <Link to={prevHref} rel="prev">
                ← Previous
              </Link>
            ) : null}
            {nextHref ? (
              <Link to={nextHref} rel="next">
                Next →
              </Link>
            ) : null}
            <span>
              press <kbd>?</kbd> for shortcuts, <kbd>G</kbd> for guidelines
            </span>
          </nav>
          <AnnotateForm
            key={`${page.unit.unitId}-${data.clientToken}`}
            unit={page.unit}
            initialValues={actionData && !actionData.ok ? { ...page.values, ...actionData.values } : page.values}
            fieldErrors={actionData && !actionData.ok ? actionData.fieldErrors : NO_ERRORS}
            rules={page.rules}
            status={page.status}
            skipReason={page.skipReason}
            clientToken={data.clientToken!}
            openedAt={data.openedAt!}
            baseDurationMs={page.baseDurationMs}
            guidelines={task.guidelines}
            closed={task.closed}
            prevHref={prevHref}
            nextHref={nextHref}
            stale={data.stale}
          />
        </>
      ) : (
        <div className="panel" data-testid="queue-done">
          <h2>Nothing left to label</h2>
          <p>
            Every unit in your queue is submitted or skipped. You can revise your labels from the <Link to={`${base}/queue`}>queue</Link>.
          </p>
          {data.nextTask ? (
            <p>
              <Link className="button" to={`/p/${slug}/tasks/${data.nextTask.id}/annotate`} data-testid="next-task">
                Next task with work: {data.nextTask.name} ({data.nextTask.left} left)
              </Link>
            </p>
          ) : (
            <p>
              <Link to={`/p/${slug}/tasks`}>My tasks</Link>
            </p>
          )}
        </div>
      )}
    </div>
  );
}

const NO_ERRORS: Record<string, string> = {};
