/** Server-sent events: the run's progress every second until it is finished, paused or cancelled. */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireProjectRole, notFound } from "~/auth/guards.server";
import { getDal } from "~/dal.server";
import { runRow } from "~/runs/results.server";
import { runProgress } from "~/runs/runner.server";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const runId = Number(params.runId);
  if (!Number.isInteger(runId) || !(await runRow(getDal(), project.id, runId))) notFound("Run not found.");
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const stream = new ReadableStream({
    start(controller) {
      // Read from the database on every tick, so any app server in front of the same database streams the same progress.
      const send = async () => {
        if (closed) return;
        try {
          const p = await runProgress(getDal(), runId);
          if (closed) return;
          controller.enqueue(encoder.encode(`event: progress\ndata: ${JSON.stringify(p)}\n\n`));
          if (!p || ["completed", "completed-with-errors", "cancelled", "failed", "paused", "draft"].includes(p.status)) {
            clearInterval(timer);
            closed = true;
            controller.enqueue(encoder.encode(`event: end\ndata: {}\n\n`));
            controller.close();
          }
        } catch {
          clearInterval(timer);
          closed = true;
          try {
            controller.close();
          } catch {
            /* already closed */
          }
        }
      };
      timer = setInterval(() => void send(), 1000);
      void send();
      request.signal.addEventListener("abort", () => {
        clearInterval(timer);
        closed = true;
        try {
          controller.close();
        } catch {
          /* already closed */
        }
      });
    },
    cancel() {
      clearInterval(timer);
      closed = true;
    },
  });
  return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" } });
}
