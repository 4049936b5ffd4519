/** An annotator's own queue for one task: progress bars, statuses, "Next". */
import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData, useNavigate, useParams } from "@remix-run/react";
import { useEffect } from "react";
import { myQueue, nextUnitId, progress } from "~/annotation/annotate.server";
import { isAnnotatable, KIND_TITLES, readConfig } from "~/annotation/config";
import { findTask } from "~/annotation/tasks.server";
import { hasRole, notFound, requireProjectRole } from "~/auth/guards.server";
import { Markdown } from "~/components/Markdown";
import { ProgressBar } from "~/components/ProgressBar";
import styles from "~/components/annotation.css";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Queue · ${data?.task.name ?? "Task"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { user, project, role } = await requireProjectRole(request, params.slug, "annotator");
  const task = findTask(project.id, Number(params.taskId));
  if (!task || !isAnnotatable(task.kind)) notFound("Task not found.");
  const queue = myQueue(task.id, user.id).map((q, i) => ({ unitId: q.unitId, n: i + 1, status: q.status }));
  return json({
    task: { name: task.name, kindTitle: KIND_TITLES[task.kind as keyof typeof KIND_TITLES], guidelines: task.guidelines, closed: task.status !== "open" },
    queue,
    next: nextUnitId(task.id, user.id),
    progress: progress(task.id, user.id),
    researcher: hasRole(role, "researcher"),
    adjudicator: hasRole(role, "researcher") || (readConfig(task.config).adjudicators ?? []).includes(user.id),
  });
}

export default function Queue() {
  const { task, queue, next, progress, researcher, adjudicator } = useLoaderData<typeof loader>();
  const navigate = useNavigate();
  const { slug, taskId } = useParams();
  const base = `/p/${slug}/tasks/${taskId}`;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (e.ctrlKey || e.metaKey || e.altKey || t.tagName === "INPUT" || t.tagName === "TEXTAREA") return;
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
          <span className="muted">Nothing left to label.</span>
        )}
      </p>
      <details className="panel">
        <summary>Guidelines</summary>
        <Markdown>{task.guidelines || "_No guidelines for this task._"}</Markdown>
      </details>
      <h2>Your units</h2>
      {queue.length === 0 ? (
        <p className="muted">No units are assigned to you in this task.</p>
      ) : (
        <ul className="queue-list">
          {queue.map((q) => (
            <li key={q.unitId}>
              <Link to={`${base}/annotate?unit=${q.unitId}`}>Unit {q.n}</Link>
              <span className={`status-${q.status}`}>{q.status}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
