/** The status filters of an annotator's queue (shared by the server and the page). */
export const QUEUE_FILTERS = ["all", "open", "pending", "draft", "submitted", "skipped", "stale"] as const;
export type QueueFilter = (typeof QUEUE_FILTERS)[number];

export const FILTER_TITLES: Record<QueueFilter, string> = {
  all: "All",
  open: "To do",
  pending: "Pending",
  draft: "Draft",
  submitted: "Submitted",
  skipped: "Skipped",
  stale: "Stale",
};
