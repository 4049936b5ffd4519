"""Push LLMBar's pairwise data to Concord and print how well its GPT-4 judge agrees with the gold labels.

LLMBar (Zeng et al. 2024, "Evaluating Large Language Models at Evaluating Instruction Following",
ICLR; github.com/princeton-nlp/LLMBar, MIT) gives, per pair, an instruction (`input`), two outputs
(`output_1`, `output_2`), the gold preference (`label`, 1 or 2), and in each evaluator's
`evaluators/<model>/<prompt>/result.json` the same records with the judge's `winner` in both
presentation orders (`results[0]["swap = False"]`, `["swap = True"]`).

This script, through the HTTP API only (no database access):
  1. imports each result.json (or dataset.json) with the `llmbar` preset: the items, both responses,
     and the judge's verdicts in both orders (judges "<model>/<prompt>" and "… (swapped)");
  2. imports the gold labels as labels from one annotator, "gold" (preset `labels-long`: the unit is
     the item, the response is output_1: the gold label says which output wins, as the verdicts do);
  3. reads the judge-agreement export back and prints the judge table (n, accuracy, Cohen's kappa,
     macro F1, with their 95% intervals).

    python3 judge_agreement.py --server http://localhost:3000 --token ccd_… --project llmbar \\
        Dataset/LLMBar/Natural/evaluators/GPT-4/Vanilla/result.json

CONCORD_URL and CONCORD_TOKEN stand in for --server and --token. --json prints the export's rows as
JSON (one list) instead of the table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from concord_client import Client, ConcordError  # noqa: E402


def llmbar_item_id(r: Dict[str, Any]) -> str:
    """The item ID the `llmbar` preset gives a pair: "llmbar-" and the first 16 hex digits of the SHA-256
    of input, output_1 and output_2 joined by NUL (app/formats/presets/llmbar.server.ts llmbarId)."""
    text = f"{r['input']}\u0000{r['output_1']}\u0000{r['output_2']}"
    return "llmbar-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def llmbar_name(path: str) -> str:
    """The name the server is told for an LLMBar file: its path from the first "LLMBar" or "Processed" folder
    on ("LLMBar/Natural/evaluators/GPT-4/Vanilla/result.json"), from which the llmbar preset reads the
    dataset ("LLMBar Natural") and the judge ("GPT-4/Vanilla"); the folders above stay on this machine."""
    parts = [p for p in os.path.normpath(os.path.abspath(path)).split(os.sep) if p]
    top = next((i for i, p in enumerate(parts) if p in ("LLMBar", "Processed")), -1)
    return "/".join(parts[top:]) if 0 <= top < len(parts) - 1 else os.path.basename(path)


def gold_labels(paths: List[str]) -> List[Dict[str, Any]]:
    """One label per pair (each pair once, even when two files hold it): unit, response, annotator, label."""
    seen: Dict[str, Any] = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for r in json.load(f):
                seen.setdefault(llmbar_item_id(r), r["label"])
    return [{"unit": unit, "response": "output_1", "annotator": "gold", "label": label} for unit, label in seen.items()]


def fmt(x: Any, pct: bool = False) -> str:
    if x is None or x == "":
        return "—"
    return f"{100 * x:.1f}%" if pct else f"{x:.3f}"


def ci(row: Dict[str, Any], name: str, pct: bool = False) -> str:
    return f"{fmt(row.get(name), pct)} [{fmt(row.get(name + '_ci_low'), pct)}, {fmt(row.get(name + '_ci_high'), pct)}]"


def print_table(rows: List[Dict[str, Any]]) -> None:
    head = ["judge", "n", "unparsed", "accuracy [95% CI]", "Cohen's kappa [95% CI]", "macro F1 [95% CI]"]
    body = [
        [str(r["judge"]), str(r["n"]), str(r["unparsed"]), ci(r, "accuracy", True), ci(r, "cohen_kappa"), ci(r, "macro_f1")]
        for r in rows
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    print(line(head))
    print("  ".join("-" * w for w in widths))
    for b in body:
        print(line(b))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Push LLMBar pairs, gold labels and judge verdicts to Concord; print the judge table.")
    ap.add_argument("files", nargs="+", help="LLMBar result.json (or dataset.json) files")
    ap.add_argument("--server", default=os.environ.get("CONCORD_URL"), help="the server's address (or CONCORD_URL)")
    ap.add_argument("--token", default=os.environ.get("CONCORD_TOKEN"), help="a write token (or CONCORD_TOKEN)")
    ap.add_argument("--project", required=True, help="the project's slug (it must exist; you a researcher or admin there)")
    ap.add_argument("--reference", default="majority", help="majority (default) or each")
    ap.add_argument("--json", action="store_true", help="print the export's rows as JSON instead of the table")
    args = ap.parse_args(argv)
    if not args.server or not args.token:
        ap.error("give --server and --token (or set CONCORD_URL and CONCORD_TOKEN)")

    client = Client(args.server, args.token)
    try:
        for path in args.files:
            s = client.import_file(args.project, "llmbar", path, filename=llmbar_name(path))["summary"]
            print(f"{path}: {s['items']} items, {s['responses']} responses, {s['verdicts']} verdicts", file=sys.stderr)
        # The labels go in after the responses they judge exist; LLMBar's 1/2 are category codes (which output wins).
        s = client.import_records(args.project, "labels-long", gold_labels(args.files), dataset="LLMBar gold labels", level="nominal")["summary"]
        print(f"gold labels: {s['annotations']} labels", file=sys.stderr)
        rows = client.export(args.project, "judge-agreement", reference=args.reference)
    except ConcordError as err:
        print(f"judge_agreement: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows))
    else:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
