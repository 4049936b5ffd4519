import { CsrfField } from "~/components/CsrfField";
import type { HeadersFunction, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import {
  Form,
  Link,
  Links,
  Meta,
  Outlet,
  Scripts,
  ScrollRestoration,
  isRouteErrorResponse,
  useLoaderData,
  useRouteError,
  useRouteLoaderData,
} from "@remix-run/react";
import styles from "~/styles.css";
import { getOptionalUser } from "~/auth/guards.server";
import { useNonce } from "~/nonce";

export const links: LinksFunction = () => [
  { rel: "stylesheet", href: styles },
  { rel: "icon", href: "/favicon.svg", type: "image/svg+xml" },
];

export const meta: MetaFunction = () => [{ title: "Concord" }];

/**
 * A page whose loader was refused with 429 (a heavy read over the user's limit: app/request-limits.server.ts)
 * keeps its Retry-After; pages have no other headers of their own.
 */
export const headers: HeadersFunction = ({ errorHeaders }) => {
  const headers = new Headers();
  const retryAfter = errorHeaders?.get("Retry-After");
  if (retryAfter) headers.set("Retry-After", retryAfter);
  return headers;
};

export async function loader({ request, context }: LoaderFunctionArgs) {
  const user = await getOptionalUser(request);
  return json({
    user: user ? { name: user.name, email: user.email, isSiteAdmin: user.isSiteAdmin } : null,
    // This browser's CSRF token (app/auth/csrf.server.ts), rendered into every form by <CsrfField />.
    csrf: context?.csrfToken ?? "",
  });
}

function Shell({ children }: { children: React.ReactNode }) {
  const data = useRouteLoaderData<typeof loader>("root");
  const user = data?.user ?? null;
  const nonce = useNonce();
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <Meta />
        <Links />
      </head>
      <body>
        <header className="topbar">
          <Link to="/" className="brand">
            Concord
          </Link>
          {user ? (
            <nav className="topnav">
              <Link to="/projects">Projects</Link>
              {user.isSiteAdmin ? <Link to="/admin/users">Users</Link> : null}
              <Link to="/settings/tokens">API tokens</Link>
              <span className="muted" data-testid="signed-in-as">
                {user.name}
              </span>
              <Form method="post" action="/logout">
                <CsrfField />
                <button type="submit" className="link-button">
                  Sign out
                </button>
              </Form>
            </nav>
          ) : null}
        </header>
        <main className="page">{children}</main>
        <ScrollRestoration nonce={nonce} />
        <Scripts nonce={nonce} />
      </body>
    </html>
  );
}

export function Layout({ children }: { children: React.ReactNode }) {
  return <Shell>{children}</Shell>;
}

export default function App() {
  useLoaderData<typeof loader>();
  return <Outlet />;
}

export function ErrorBoundary() {
  const error = useRouteError();
  if (isRouteErrorResponse(error)) {
    return (
      <div className="error-page">
        <h1>
          {error.status} {error.statusText}
        </h1>
        <p>{typeof error.data === "string" ? error.data : "Something went wrong."}</p>
        <p>
          <Link to="/projects">Back to your projects</Link>
        </p>
      </div>
    );
  }
  return (
    <div className="error-page">
      <h1>Unexpected error</h1>
      <p>Something went wrong on our side. Your saved work is safe; try again.</p>
    </div>
  );
}
