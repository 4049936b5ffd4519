/** Server-sent events: the run's progress every second until it is finished, paused or cancelled. */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireProjectRole, notFound } from "~/auth/guards.server";
import { getDb } from "~/db.server";
import { runRow } from "~/runs/results.server";
import { runProgress } from "~/runs/runner.server";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const runId = Number(params.runId);
  if (!Number.isInteger(runId) || !runRow(getDb(), project.id, runId)) notFound("Run not found.");
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream({
    start(controller) {
      const send = () => {
        try {
          const p = runProgress(getDb(), runId);
          controller.enqueue(encoder.encode(`event: progress\ndata: ${JSON.stringify(p)}\n\n`));
          if (!p || ["completed", "completed-with-errors", "cancelled", "failed", "paused", "draft"].includes(p.status)) {
            clearInterval(timer);
            controller.enqueue(encoder.encode(`event: end\ndata: {}\n\n`));
            controller.close();
          }
        } catch {
          clearInterval(timer);
          try {
            controller.close();
          } catch {
            /* already closed */
          }
        }
      };
      timer = setInterval(send, 1000);
      send();
      request.signal.addEventListener("abort", () => {
        clearInterval(timer);
        try {
          controller.close();
        } catch {
          /* already closed */
        }
      });
    },
    cancel() {
      clearInterval(timer);
    },
  });
  return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" } });
}
