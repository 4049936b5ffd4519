/**
 * An annotator's own queue for one task: progress bars, "Next", and their units
 * with a snippet, status and stale mark, filtered by status (?status=…, plain links).
 */
import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData, useNavigate, useParams } from "@remix-run/react";
import { useEffect } from "react";
import { nextUnitId, progress } from "~/annotation/annotate.server";
import { FILTER_TITLES, QUEUE_FILTERS, type QueueFilter } from "~/annotation/queue-filters";
import { filterQueue, nextTaskWithWork, queueRows } from "~/annotation/queue.server";
import { readConfig } from "~/annotation/config.server";
import { findTask } from "~/annotation/tasks.server";
import { isAnnotatable, kindTitle } from "~/task-kinds/registry.server";
import { hasRole, notFound, requireProjectRole } from "~/auth/guards.server";
import { Markdown, markdownLinks } from "~/components/Markdown";
import { ProgressBar } from "~/components/ProgressBar";
import styles from "~/components/annotation.css";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }, ...markdownLinks];
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Queue · ${data?.task.name ?? "Task"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { user, project, role } = await requireProjectRole(request, params.slug, "annotator");
  const task = await findTask(project.id, Number(params.taskId));
  if (!task || !isAnnotatable(task.kind)) notFound("Task not found.");
  const all = await queueRows(task.id, user.id);
  const next = await nextUnitId(task.id, user.id);
  const asked = new URL(request.url).searchParams.get("status") ?? "all";
  const filter: QueueFilter = (QUEUE_FILTERS as readonly string[]).includes(asked) ? (asked as QueueFilter) : "all";
  const counts = Object.fromEntries(QUEUE_FILTERS.map((f) => [f, filterQueue(all, f).length])) as Record<QueueFilter, number>;
  return json({
    filter,
    counts,
    total: all.length,
    queue: filterQueue(all, filter),
    task: {
      name: task.name,
      kindTitle: kindTitle(task.kind),
      guidelines: task.guidelines,
      closed: task.status !== "open",
    },
    next,
    nextTask: next == null ? await nextTaskWithWork(project.id, user.id, task.id) : null,
    progress: await progress(task.id, user.id),
    researcher: hasRole(role, "researcher"),
    adjudicator: hasRole(role, "researcher") || (readConfig(task.config).adjudicators ?? []).includes(user.id),
  });
}

export default function Queue() {
  const { task, queue, next, nextTask, progress, researcher, adjudicator, filter, counts, total } = useLoaderData<typeof loader>();
  const navigate = useNavigate();
  const { slug, taskId } = useParams();
  const base = `/p/${slug}/tasks/${taskId}`;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (e.ctrlKey || e.metaKey || e.altKey || t.tagName === "INPUT" || t.tagName === "TEXTAREA") return;
      // Enter on a focused link or button (a unit, a filter) does what that control says.
      if (e.key === "Enter" && t !== document.body && t.closest("a[href], button, summary, select")) return;
      if ((e.key === "Enter" || e.key === "n" || e.key === "N" || e.key === "ArrowRight") && next != null) {
        e.preventDefault();
        navigate(`${base}/annotate?unit=${next}`);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [next, navigate, base]);
  return (
    <div>
      <div className="annotate-head">
        <h1>{task.name}</h1>
        <span className="muted">
          {task.kindTitle}
          {task.closed ? " · closed" : ""}
          {researcher ? (
            <>
              {" · "}
              <Link to={base}>Task overview</Link>
            </>
          ) : null}
          {adjudicator ? (
            <>
              {" · "}
              <Link to={`${base}/adjudicate`}>Adjudicate</Link>
            </>
          ) : null}
        </span>
      </div>
      <ProgressBar label="Your progress" done={progress.mine.done} total={progress.mine.total} testId="progress-mine" />
      <ProgressBar label="Whole task" done={progress.overall.done} total={progress.overall.total} testId="progress-overall" />
      <p>
        {next != null ? (
          <Link className="button" to={`${base}/annotate?unit=${next}`} data-testid="next">
            Next unit <kbd>Enter</kbd>
          </Link>
        ) : (
          <>
            <span className="muted">Nothing left to label.</span>{" "}
            {nextTask ? (
              <Link to={`/p/${slug}/tasks/${nextTask.id}/annotate`} data-testid="next-task">
                Next task with work: {nextTask.name} ({nextTask.left} left)
              </Link>
            ) : (
              <Link to={`/p/${slug}/tasks`}>My tasks</Link>
            )}
          </>
        )}
      </p>
      <details className="panel">
        <summary>Guidelines</summary>
        <Markdown>{task.guidelines || "_No guidelines for this task._"}</Markdown>
      </details>
      <h2>Your units</h2>
      {total === 0 ? (
        <p className="muted">No units are assigned to you in this task.</p>
      ) : (
        <>
          <nav className="queue-filter" aria-label="Filter by status">
            {QUEUE_FILTERS.filter((f) => f === "all" || counts[f] > 0 || f === filter).map((f) => (
              <Link key={f} to={f === "all" ? "?" : `?status=${f}`} aria-current={f === filter ? "true" : undefined} replace>
                {FILTER_TITLES[f]} ({counts[f]})
              </Link>
            ))}
          </nav>
          {queue.length === 0 ? <p className="muted">No units with this status.</p> : null}
          <ul className="queue-list" data-testid="queue-list">
            {queue.map((q) => (
              <li key={q.unitId} data-status={q.status} data-stale={q.stale ? "true" : undefined}>
                <span className="queue-unit">
                  <Link to={`${base}/annotate?unit=${q.unitId}`}>Unit {q.n}</Link>
                  <span className="queue-snippet" data-testid="snippet" title={q.snippet}>
                    {q.checklistItem ? `${q.checklistItem} — ` : ""}
                    {q.snippet}
                  </span>
                </span>
                <span>
                  {q.stale ? (
                    <span className="badge stale" title="The text changed after you labelled it: please check your label.">
                      stale
                    </span>
                  ) : null}{" "}
                  <span className={`status-${q.status}`}>{q.status}</span>
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
