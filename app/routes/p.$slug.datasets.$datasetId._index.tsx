import { parseQuery } from "~/forms.server";
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, Link, useLoaderData, useNavigation } from "@remix-run/react";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { browseItems, BrowseQuerySchema, findDataset } from "~/benchmark/browse.server";
import { Pager } from "~/components/Pager";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.dataset.name ?? "Dataset"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const datasetId = Number(params.datasetId);
  const dataset = Number.isInteger(datasetId) ? await findDataset(project.id, datasetId) : undefined;
  if (!dataset) notFound("Dataset not found.");
  const url = new URL(request.url);
  const query = parseQuery(BrowseQuerySchema, url);
  const result = await browseItems(dataset.id, query);
  return json({
    dataset: { id: dataset.id, name: dataset.name, version: dataset.version, source: dataset.source },
    query,
    ...result,
  });
}

export default function DatasetBrowser() {
  const { dataset, query, total, rows, domains, pages } = useLoaderData<typeof loader>();
  const navigation = useNavigation();
  return (
    <div>
      <h1>
        {dataset.name} <span className="muted">v{dataset.version}</span>
      </h1>
      <Form method="get" className="toolbar" role="search">
        <label>
          Search text
          <input type="search" name="q" defaultValue={query.q} placeholder="Prompt, passage or checklist text" />
        </label>
        <label>
          Domain
          <select name="domain" defaultValue={query.domain}>
            <option value="">All domains</option>
            {domains.map((d) => (
              <option key={d.domain} value={d.domain}>
                {d.domain} ({d.n})
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Apply</button>
        {query.q || query.domain ? <Link to="?">Clear</Link> : null}
      </Form>
      <p className="muted" data-testid="result-count" aria-live="polite">
        {navigation.state === "loading" ? "Loading…" : `${total} item${total === 1 ? "" : "s"}`}
      </p>
      <table>
        <thead>
          <tr>
            <th>ID</th>
            <th>Prompt</th>
            <th>Domain</th>
            <th>Task type</th>
            <th className="num">Checklist</th>
            <th className="num">Responses</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <td>
                <Link to={`items/${r.id}`}>{r.sourceId}</Link>
              </td>
              <td>{r.query.length > 180 ? `${r.query.slice(0, 180)}…` : r.query}</td>
              <td>
                {r.domain}
                {r.subject ? <div className="muted small">{r.subject}</div> : null}
              </td>
              <td>{r.taskType}</td>
              <td className="num">{r.checklistCount}</td>
              <td className="num">{r.responseCount}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 ? <p className="muted">No items match.</p> : null}
      <Pager page={query.page} pages={pages} />
    </div>
  );
}
