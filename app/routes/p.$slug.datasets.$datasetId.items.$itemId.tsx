import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { findDataset, itemDetail } from "~/benchmark/browse.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.item.sourceId ?? "Item"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const dataset = await findDataset(project.id, Number(params.datasetId));
  if (!dataset) notFound("Dataset not found.");
  const detail = await itemDetail(dataset.id, Number(params.itemId));
  if (!detail) notFound("Item not found.");
  return json({ dataset: { id: dataset.id, name: dataset.name, version: dataset.version }, ...detail });
}

function VerdictBadge({ value }: { value: string | null | undefined }) {
  if (value == null) return <span className="badge">—</span>;
  const cls = value === "Yes" ? "badge yes" : value === "No" ? "badge no" : "badge";
  return <span className={cls}>{value}</span>;
}

export default function ItemDetail() {
  const { dataset, item, checklist, references, responses, judges, verdicts } = useLoaderData<typeof loader>();
  const turns = [...new Set(responses.map((r) => r.turn))].sort((a, b) => a - b);
  return (
    <div>
      <div className="breadcrumbs">
        <Link to="../..">
          {dataset.name} v{dataset.version}
        </Link>{" "}
        / {item.sourceId} ·{" "}
        <Link to={`../../../../curation/${dataset.id}/items/${item.id}`} relative="path">
          Curate this item
        </Link>
      </div>
      <h1>{item.sourceId}</h1>
      <p className="muted">{[item.domain, item.subject, item.taskType, item.language].filter(Boolean).join(" · ")}</p>
      <div className="panel">
        <h2>Prompt</h2>
        <div className="prewrap">{item.query}</div>
        {item.passage ? (
          <>
            <h3>Passage</h3>
            <div className="prewrap">{item.passage}</div>
          </>
        ) : null}
      </div>
      <div className="panel">
        <h2>Checklist ({checklist.length})</h2>
        <ol className="checklist">
          {checklist.map((c) => (
            <li key={c.id}>
              {c.text}
              {c.weight != null ? <span className="badge">weight {c.weight}</span> : null}
            </li>
          ))}
        </ol>
      </div>
      <div className="panel">
        <h2>Reference</h2>
        {references.length === 0 ? <p className="muted">No reference.</p> : null}
        {references.map((r) => (
          <div key={r.id} className={r.isCurrent ? "" : "muted"}>
            <div className="small muted">
              v{r.version} · {r.provenance}
              {r.isCurrent ? " · current" : ""}
              {r.reason ? ` · ${r.reason}` : ""}
            </div>
            <div className="prewrap">{r.text}</div>
          </div>
        ))}
      </div>
      <div className="panel">
        <h2>Responses ({responses.length})</h2>
        {turns.length > 1 ? <p className="muted small">Turns {turns.join(", ")}</p> : null}
        <div className="responses">
          {responses.map((r) => (
            <div key={r.id} className="response" data-testid="response">
              <div className="small">
                <strong>{r.model}</strong> · turn {r.turn} <span className="badge">{r.origin}</span>
              </div>
              <div className="prewrap">{r.text}</div>
              {judges.length > 0 && checklist.length > 0 ? (
                <table className="small" style={{ marginTop: "0.5rem" }}>
                  <thead>
                    <tr>
                      <th>#</th>
                      {judges.map((j) => (
                        <th key={j}>{j}</th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {checklist.map((c, i) => (
                      <tr key={c.id}>
                        <td title={c.text}>{i + 1}</td>
                        {judges.map((j) => (
                          <td key={j}>
                            <VerdictBadge value={verdicts[r.id]?.[j]?.[String(c.id)]} />
                          </td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : null}
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
