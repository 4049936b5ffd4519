import { parseQuery } from "~/forms.server";
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, Link, useLoaderData, useSearchParams } from "@remix-run/react";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { heavyRead } from "~/request-limits.server";
import { DisagreementQuerySchema, disagreementFilters } from "~/reports/disagreements";
import { disagreementsFor } from "~/reports/report.server";
import { ReportTabs } from "~/reports/ui";
import { Pager } from "~/components/Pager";

export const meta: MetaFunction = () => [{ title: "Disagreements · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const taskId = Number(params.taskId);
  const url = new URL(request.url);
  const query = parseQuery(DisagreementQuerySchema, url);
  // A heavy read (app/request-limits.server.ts): the task's final labels are computed again after every change.
  const result = Number.isInteger(taskId)
    ? await heavyRead(user.id, () => disagreementsFor(project.id, taskId, disagreementFilters(query)))
    : null;
  if (!result) notFound("Task not found.");
  return json({ slug: project.slug, query, ...result });
}

export default function Disagreements() {
  const { slug, query, task, judges, domains, models, total, rows, numeric } = useLoaderData<typeof loader>();
  const [params] = useSearchParams();
  const pages = Math.max(1, Math.ceil(total / 50));
  const csv = new URLSearchParams(params);
  csv.set("table", "disagreements");
  csv.delete("page");
  return (
    <div>
      <h1>{task.name}: where judges and humans differ</h1>
      <ReportTabs
        slug={slug}
        taskId={task.id}
        query={new URLSearchParams({
          ...(query.rule ? { rule: query.rule } : {}),
          ...(query.stale ? { stale: query.stale } : {}),
        }).toString()}
      />
      <Form method="get" className="toolbar">
        <label>
          Judge
          <select name="judge" defaultValue={query.judge ?? ""}>
            <option value="">All judges</option>
            {judges.map((j) => (
              <option key={j.id} value={j.id}>
                {j.name} ({j.unparsed} unparsed)
              </option>
            ))}
          </select>
        </label>
        <label>
          Domain
          <select name="domain" defaultValue={query.domain ?? ""}>
            <option value="">All domains</option>
            {domains.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <label>
          Model
          <select name="model" defaultValue={query.model ?? ""}>
            <option value="">All models</option>
            {models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Show
          <select name="show" defaultValue={query.show ?? ""}>
            <option value="">Disagreements</option>
            <option value="unparsed">Unparsed verdicts</option>
          </select>
        </label>
        {query.rule ? <input type="hidden" name="rule" value={query.rule} /> : null}
        {query.stale ? <input type="hidden" name="stale" value={query.stale} /> : null}
        <button type="submit">Apply</button>
        <a href={`/p/${slug}/reports/${task.id}/csv?${csv}`} download>
          Export CSV
        </a>
      </Form>
      <p className="muted" data-testid="disagreement-count">
        {query.show === "unparsed"
          ? `${total} unparsed verdict${total === 1 ? "" : "s"} (the judge's reply could not be parsed; left out of every figure, never counted as “No”)`
          : `${total} disagreement${total === 1 ? "" : "s"}${numeric ? " (judge score × 0.5 differs from the final human score by 1 point or more)" : ""}`}
      </p>
      <table>
        <thead>
          <tr>
            <th>Item</th>
            <th>Judge</th>
            <th>Human</th>
            <th>Judge says</th>
            <th>Texts</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={`${r.unitId}-${r.judge}-${i}`}>
              <td>
                <Link to={`/p/${slug}/datasets/${task.datasetId}/items/${r.itemId}`}>{r.itemSourceId}</Link>
                <div className="muted small">
                  {r.domain} {r.model ? `· ${r.model}` : ""} {r.turn != null ? `· turn ${r.turn}` : ""}
                </div>
              </td>
              <td>{r.judge}</td>
              <td>{r.human}</td>
              <td>{r.verdict}</td>
              <td>
                <div className="small">
                  <strong>Query:</strong> {r.query}
                </div>
                {r.checklistItem ? (
                  <div className="small">
                    <strong>Checklist item:</strong> {r.checklistItem}
                  </div>
                ) : null}
                {r.response ? (
                  <div className="small">
                    <strong>Response:</strong> {r.response}
                  </div>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager page={query.page} pages={pages} />
    </div>
  );
}
