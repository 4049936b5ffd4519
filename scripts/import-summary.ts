/**
 * How `npm run import` prints an import's summary, locally and against a remote server (scripts/remote.ts):
 * `--format text` the sentences of describeSummary (on stderr when the file was refused), `--format json`
 * the counts, the first warnings and errors (20 for a dry run, 1,000 otherwise) and the flags.
 * Returns the command's exit code: 1 when the file has problems (nothing written), else 0.
 */
import { describeSummary, type ImportSummary } from "../app/formats/import.server";

export function printImportSummary(summary: ImportSummary, format: "text" | "json"): 0 | 1 {
  if (format === "json") {
    const { items, checklistItems, references, responses, verdicts, annotations, warnings, errors } = summary;
    const limit = summary.dryRun ? 20 : 1000;
    console.log(
      JSON.stringify(
        {
          items,
          checklistItems,
          references,
          responses,
          verdicts,
          annotations,
          warnings: warnings.slice(0, limit),
          errors: errors.slice(0, limit),
          warningCount: summary.warningCount,
          errorCount: summary.errorCount,
          dryRun: summary.dryRun,
          unchanged: summary.unchanged,
          conflictCount: summary.conflictCount,
          alreadyPresent: summary.alreadyPresent,
          newRows: summary.newRows,
          committed: summary.committed,
          dataset: summary.dataset,
          level: summary.level,
        },
        null,
        2,
      ),
    );
  } else {
    (summary.errorCount ? console.error : console.log)(describeSummary(summary));
  }
  return summary.errorCount ? 1 : 0;
}
