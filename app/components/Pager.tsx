import { Link, useSearchParams } from "@remix-run/react";

/** Previous/next links for a paged list; keeps every other query parameter of the page. */
export function Pager({ page, pages }: { page: number; pages: number }) {
  const [params] = useSearchParams();
  if (pages <= 1) return null;
  const link = (p: number) => {
    const next = new URLSearchParams(params);
    next.set("page", String(p));
    return `?${next}`;
  };
  return (
    <div className="pager">
      {page > 1 ? <Link to={link(page - 1)}>← Previous</Link> : null}
      <span className="muted">
        Page {page} of {pages}
      </span>
      {page < pages ? <Link to={link(page + 1)}>Next →</Link> : null}
    </div>
  );
}
