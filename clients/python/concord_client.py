"""Concord's HTTP API (``/api/v1/``) from Python: one file, standard library only (Python 3.9+).

Copy this file next to your harness or notebook, or put ``clients/python`` on ``sys.path``::

    from concord_client import Client, ConcordError

    c = Client("https://concord.example.org", token="ccd_...")
    c.import_file("law", "responses", "outputs.jsonl")          # push a file as `npm run import` would
    rows = c.export("law", "judge-agreement")                   # pull figures (every page)
    df = c.export_df("law", "annotations")                      # the same, as a pandas DataFrame

Every call raises :class:`ConcordError` for an answer of 400 or more, carrying the problem details the
server sent (RFC 9457: ``status``, ``title``, ``detail`` and, for a rejected file, ``errors``: a list of
``{"row", "field", "message"}``).

Retries: a call that failed to connect, or was answered 5xx, or 429 with ``Retry-After`` is sent again
(``retries`` times, waiting ``Retry-After`` or a growing pause). A POST carries an ``Idempotency-Key``
(a new uuid4 per call unless you pass ``idempotency_key=``), the same key on each of its retries, so
the server writes once however many times the request reaches it.

The token is sent only to ``base_url``: redirects are not followed, and ``next`` links are read for
their cursor and asked of ``base_url`` again.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

__all__ = ["Client", "ConcordError", "CONTENT_TYPES"]
__version__ = "1.0.0"

#: The body types the imports endpoint reads, by file extension.
CONTENT_TYPES = {
    ".csv": "text/csv",
    ".jsonl": "application/x-ndjson",
    ".ndjson": "application/x-ndjson",
    ".json": "application/json",
}

#: Import states after which nothing more happens.
_DONE = ("succeeded", "failed")
#: Run actions the API offers (POST .../runs/{id}/{action}).
RUN_ACTIONS = ("pause", "resume", "cancel", "retry-failed")
#: The largest page the API gives (rows).
MAX_PAGE = 10000
#: The longest wait the client honours from a Retry-After (seconds).
_MAX_RETRY_AFTER = 60.0

Json = Any
Body = Union[None, bytes, Callable[[], Tuple[Any, int]]]


class ConcordError(Exception):
    """An answer of 400 or more (or a connection that never got one), with the server's problem details.

    Attributes:
        status: the HTTP status (0 when no answer came: the server could not be reached).
        title: the problem's short title ("Unprocessable Content").
        detail: what went wrong, in a sentence.
        errors: for rejected input, a list of ``{"row": int, "field": str, "message": str}``
            (row and field may be absent).
        type: the problem type URI (``about:blank`` or ``urn:concord:problem:…``).
        body: the whole problem document (a dict), or the answer's text when it was not JSON.
        retry_after: the Retry-After of a 429 or 503, in seconds, else None.
    """

    def __init__(
        self,
        status: int,
        title: str,
        detail: str = "",
        errors: Optional[List[Dict[str, Any]]] = None,
        type: str = "about:blank",
        body: Any = None,
        retry_after: Optional[float] = None,
    ) -> None:
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = list(errors or [])
        self.type = type
        self.body = body
        self.retry_after = retry_after
        super().__init__(self._message())

    def _message(self) -> str:
        head = f"{self.status} {self.title}" if self.status else self.title
        text = f"{head}: {self.detail}" if self.detail else head
        for e in self.errors[:20]:
            where = f"row {e['row']}" if e.get("row") else "file" if "row" in e else ""
            field = f'field "{e["field"]}"' if e.get("field") else ""
            place = ", ".join(p for p in (where, field) if p)
            text += f"\n  {place + ': ' if place else ''}{e.get('message', '')}"
        if len(self.errors) > 20:
            text += f"\n  … and {len(self.errors) - 20} more"
        return text

    @classmethod
    def from_answer(cls, status: int, headers: Mapping[str, str], data: bytes) -> "ConcordError":
        """The error for an answer: its problem details when the body is problem+json (or JSON)."""
        retry = _retry_after(headers)
        text = data.decode("utf-8", "replace")
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            return cls(
                status=int(doc.get("status") or status),
                title=str(doc.get("title") or _reason(status)),
                detail=str(doc.get("detail") or ""),
                errors=[e for e in doc.get("errors") or [] if isinstance(e, dict)],
                type=str(doc.get("type") or "about:blank"),
                body=doc,
                retry_after=retry,
            )
        return cls(status, _reason(status), text.strip()[:500], body=text, retry_after=retry)


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _retry_after(headers: Mapping[str, str]) -> Optional[float]:
    value = _header(headers, "Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare from this server; fall back to the client's own pause


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for k, v in headers.items():
        if k.lower() == name.lower():
            return v
    return None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API never redirects; following one could carry the token elsewhere. A 3xx is answered as is."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401 (urllib's signature)
        return None


def _query_value(value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, set)):
        return ",".join(str(v) for v in value)
    return str(value)


def _query(options: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """Keyword options as query parameters: True/False → true/false, a list → "a,b", a dict (``map``) → one
    ``name=KEY=VALUE`` per entry, None left out. Names are kept as given (``dry_run``, ``unparsed``)."""
    pairs: List[Tuple[str, str]] = []
    for name, value in options.items():
        if isinstance(value, Mapping):
            pairs.extend((name, f"{k}={v}") for k, v in value.items())
        else:
            v = _query_value(value)
            if v is not None:
                pairs.append((name, v))
    return pairs


class Client:
    """A Concord server, reached with a personal access token (Settings → API tokens, or
    ``npm run tokens -- create``).

    Args:
        base_url: the server's address, e.g. ``"https://concord.example.org"`` (no ``/api/v1``).
        token: the bearer token (``ccd_…``); a read token reads, a write token also writes.
        timeout: seconds to wait for the server on each request (a long import answers 202 and is
            polled, so no call waits longer than this at a time).
        retries: how many times a failed call is sent again (connection errors, 5xx, 429 with Retry-After).
        poll_interval: seconds between two looks at a running import.
    """

    def __init__(self, base_url: str, token: str, timeout: float = 60, retries: int = 3, poll_interval: float = 0.5) -> None:
        if not token:
            raise ValueError("Client: a token is required (create one on Settings → API tokens).")
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"Client: base_url must be an http(s) address, not {base_url!r}.")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.poll_interval = poll_interval
        self._opener = urllib.request.build_opener(_NoRedirect())

    # -- transport -----------------------------------------------------------------------------------

    def _url(self, path: str, query: Optional[Iterable[Tuple[str, str]]] = None) -> str:
        url = self.base_url + path
        q = urllib.parse.urlencode(list(query or []))
        return f"{url}?{q}" if q else url

    def _send(
        self,
        method: str,
        url: str,
        body: Body = None,
        content_type: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        accept: str = "application/json",
    ) -> Tuple[int, Dict[str, str], bytes]:
        """One call, retried as the module says. ``body`` is bytes, or a function giving a fresh
        (file object, length) for each attempt (a file streamed from disk). Returns (status, headers, body)
        of a 2xx/3xx answer; raises ConcordError otherwise."""
        attempt = 0
        while True:
            attempt += 1
            data: Any = None
            length: Optional[int] = None
            to_close = None
            if isinstance(body, (bytes, bytearray)):
                data, length = bytes(body), len(body)
            elif callable(body):
                data, length = body()
                to_close = data
            req = urllib.request.Request(url, data=data, method=method)
            # Unredirected: urllib would otherwise copy it to wherever a redirect pointed.
            req.add_unredirected_header("Authorization", f"Bearer {self.token}")
            req.add_header("Accept", accept)
            req.add_header("User-Agent", f"concord-client-python/{__version__}")
            if data is not None:
                req.add_header("Content-Type", content_type or "application/octet-stream")
                req.add_header("Content-Length", str(length))
            elif method == "POST":
                req.add_header("Content-Length", "0")
            if idempotency_key:
                req.add_header("Idempotency-Key", idempotency_key)
            try:
                with self._opener.open(req, timeout=self.timeout) as res:
                    return res.status, dict(res.headers.items()), res.read()
            except urllib.error.HTTPError as err:
                status, headers = err.code, dict(err.headers.items()) if err.headers else {}
                payload = err.read() if err.fp is not None else b""
                if 300 <= status < 400:
                    return status, headers, payload
                error = ConcordError.from_answer(status, headers, payload)
                wait = self._retry_wait(error, attempt)
                if wait is None:
                    raise error from None
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as err:
                reason = getattr(err, "reason", err)
                if attempt > self.retries:
                    raise ConcordError(0, "Connection failed", f"{method} {url}: {reason}") from None
                wait = self._backoff(attempt)
            finally:
                if to_close is not None:
                    to_close.close()
            time.sleep(wait)

    def _backoff(self, attempt: int) -> float:
        return min(10.0, 0.25 * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)

    def _retry_wait(self, error: ConcordError, attempt: int) -> Optional[float]:
        """How long to wait before sending the call again, or None to give up (the error is final)."""
        if attempt > self.retries:
            return None
        if error.status == 429 or (error.status == 409 and error.type.endswith(":idempotency-key-in-progress")):
            return None if error.retry_after is None else min(error.retry_after, _MAX_RETRY_AFTER)
        if error.status >= 500:
            return min(error.retry_after, _MAX_RETRY_AFTER) if error.retry_after is not None else self._backoff(attempt)
        return None

    def _json(self, method: str, path: str, query: Optional[Mapping[str, Any]] = None, **kw: Any) -> Json:
        _, _, data = self._send(method, self._url(path, _query(query or {})), **kw)
        return json.loads(data.decode("utf-8")) if data else None

    def _post_json(self, path: str, payload: Any, idempotency_key: Optional[str]) -> Json:
        body = json.dumps(payload).encode("utf-8")
        return self._json("POST", path, body=body, content_type="application/json", idempotency_key=idempotency_key or str(uuid.uuid4()))

    def _pages(self, path: str, query: Optional[Mapping[str, Any]] = None) -> Iterator[Dict[str, Any]]:
        """Every row of a paged list: the first page, then each ``next`` page's cursor asked of base_url."""
        pairs = _query(query or {})
        while True:
            _, _, data = self._send("GET", self._url(path, pairs))
            page = json.loads(data.decode("utf-8"))
            for row in page.get("data") or []:
                yield row
            nxt = page.get("next")
            if not nxt:
                return
            pairs = urllib.parse.parse_qsl(urllib.parse.urlsplit(nxt).query, keep_blank_values=True)

    @staticmethod
    def _p(project: str) -> str:
        return "/api/v1/projects/" + urllib.parse.quote(project, safe="")

    # -- projects ------------------------------------------------------------------------------------

    def projects(self) -> List[Dict[str, Any]]:
        """The projects the token reaches, with the user's role in each (every page)."""
        return list(self._pages("/api/v1/projects", {"limit": MAX_PAGE}))

    def project(self, slug: str) -> Dict[str, Any]:
        """One project: its name, the user's role, and (researchers, admins) its datasets and counts."""
        return self._json("GET", self._p(slug))

    # -- datasets --------------------------------------------------------------------------------------

    def datasets(self, project: str) -> List[Dict[str, Any]]:
        """The project's datasets with their counts (every page)."""
        return list(self._pages(f"{self._p(project)}/datasets", {"limit": MAX_PAGE}))

    def dataset(self, project: str, dataset_id: Union[int, str]) -> Dict[str, Any]:
        """One dataset: its versions and their counts."""
        return self._json("GET", f"{self._p(project)}/datasets/{dataset_id}")

    def dataset_items(self, project: str, dataset_id: Union[int, str]) -> Iterator[Dict[str, Any]]:
        """A dataset's items, one at a time (a page of 10,000 in memory at a time)."""
        return self._pages(f"{self._p(project)}/datasets/{dataset_id}/items", {"limit": MAX_PAGE})

    # -- imports -------------------------------------------------------------------------------------

    def import_file(
        self,
        project: str,
        preset: str,
        path: Union[str, "os.PathLike[str]"],
        wait: bool = True,
        idempotency_key: Optional[str] = None,
        content_type: Optional[str] = None,
        **options: Any,
    ) -> Dict[str, Any]:
        """Imports a file with a preset, as ``npm run import`` and the Import page do (all or nothing).

        The file is streamed from disk; its type comes from the extension (.csv, .jsonl/.ndjson, .json)
        unless ``content_type`` is given. ``options`` are the command's flags without dashes:
        ``dry_run=True``, ``dataset="…"``, ``level="ordinal"``, ``annotators=["a", "b"]``,
        ``categories=[…]``, ``map={"unit": "id"}``, ``async_=True`` (sent as ``async``) …

        ``filename`` (default: the file's base name) is the name the server knows the file by: it names
        the dataset, as the file's name does for the command, and the llmbar preset reads the subset and
        the judge from its folders ("LLMBar/Natural/evaluators/GPT-4/Vanilla/result.json").

        Returns the import (``id``, ``status``, and ``summary``: counts, warnings, … exactly as
        ``npm run import -- --format json`` prints them). A large file is answered 202 and, with ``wait``
        (the default), polled until it ends; with ``wait=False`` the import is returned as accepted
        (``status`` queued or running): follow it with :meth:`import_status` or :meth:`wait_import`.
        Raises ConcordError (422 with ``errors`` naming row, field and reason) when the file is refused.
        """
        path = os.fspath(path)
        if content_type is None:
            ext = os.path.splitext(path)[1].lower()
            content_type = CONTENT_TYPES.get(ext)
            if content_type is None:
                raise ValueError(f"import_file: cannot tell the type of {os.path.basename(path)!r} (give content_type=, or use .csv, .jsonl or .json).")
        size = os.path.getsize(path)
        options.setdefault("filename", os.path.basename(path))

        def body() -> Tuple[Any, int]:
            return open(path, "rb"), size

        return self._import(project, preset, body, content_type, wait, idempotency_key, options)

    def import_records(
        self,
        project: str,
        preset: str,
        records: Iterable[Mapping[str, Any]],
        wait: bool = True,
        idempotency_key: Optional[str] = None,
        **options: Any,
    ) -> Dict[str, Any]:
        """Imports records (dicts with the preset's fields) sent as one JSONL body; as :meth:`import_file`
        (without ``filename`` the dataset is named by ``dataset=``, else "api-import")."""
        buf = io.BytesIO()
        for r in records:
            buf.write(json.dumps(r, ensure_ascii=False, allow_nan=False).encode("utf-8"))
            buf.write(b"\n")
        return self._import(project, preset, buf.getvalue(), "application/x-ndjson", wait, idempotency_key, options)

    def _import(self, project: str, preset: str, body: Body, content_type: str, wait: bool, key: Optional[str], options: Mapping[str, Any]) -> Dict[str, Any]:
        opts = {("async" if k == "async_" else k): v for k, v in options.items()}
        query = [("preset", preset)] + _query(opts)
        url = self._url(self._p(project) + "/imports", query)
        status, headers, data = self._send("POST", url, body=body, content_type=content_type, idempotency_key=key or str(uuid.uuid4()))
        answer = json.loads(data.decode("utf-8")) if data else {}
        if status != 202:
            return answer
        if not wait:
            return answer
        import_id = answer.get("id")
        if import_id is None:
            location = _header(headers, "Location") or ""
            import_id = location.rstrip("/").rsplit("/", 1)[-1]
        return self.wait_import(project, import_id)

    def import_status(self, project: str, import_id: Union[int, str]) -> Dict[str, Any]:
        """An import's state: ``status`` (queued, running, succeeded, failed), ``progress``, ``summary``,
        ``problems`` (row, field, message) and ``error``."""
        return self._json("GET", f"{self._p(project)}/imports/{urllib.parse.quote(str(import_id), safe='')}")

    def wait_import(self, project: str, import_id: Union[int, str], timeout: Optional[float] = None) -> Dict[str, Any]:
        """Polls an import until it ends; returns it (``summary`` inside), or raises ConcordError (422 with the
        file's problems as ``errors``) when it failed. ``timeout`` (seconds; None: no limit) raises TimeoutError."""
        start = time.monotonic()
        while True:
            st = self.import_status(project, import_id)
            if st.get("status") == "succeeded":
                return st
            if st.get("status") == "failed":
                problems = st.get("problems") or []
                detail = st.get("error") or "The import failed; nothing was written."
                raise ConcordError(422, "Import failed", str(detail), errors=problems, type="urn:concord:problem:import-failed", body=st)
            if timeout is not None and time.monotonic() - start > timeout:
                raise TimeoutError(f"import {import_id} still {st.get('status')} after {timeout} s")
            time.sleep(self.poll_interval)

    # -- exports and reports ---------------------------------------------------------------------------

    def export(self, project: str, what: str, limit: int = MAX_PAGE, **options: Any) -> List[Dict[str, Any]]:
        """The rows of an export (``annotations``, ``agreement``, ``judge-agreement``, ``judge-confusion``,
        ``runs``, ``run-results`` …) as dicts, every page followed. ``options`` as ``npm run export``'s flags
        without dashes: ``reference="each"``, ``unparsed="exclude"``, ``task=3``, ``run=7`` …"""
        return list(self.iter_export(project, what, limit=limit, **options))

    def iter_export(self, project: str, what: str, limit: int = MAX_PAGE, **options: Any) -> Iterator[Dict[str, Any]]:
        """As :meth:`export`, one row at a time (a page in memory at a time)."""
        query = {"format": "json", "limit": limit, **options}
        return self._pages(f"{self._p(project)}/exports/{urllib.parse.quote(what, safe='')}", query)

    def export_file(self, project: str, what: str, path: Union[str, "os.PathLike[str]"], format: str = "csv", **options: Any) -> int:
        """Writes an export to ``path`` as the server streams it (``format`` csv or jsonl: the same bytes as
        the Export page's download and ``npm run export``). Returns the bytes written."""
        if format not in ("csv", "jsonl"):
            raise ValueError('export_file: format must be "csv" or "jsonl".')
        url = self._url(f"{self._p(project)}/exports/{urllib.parse.quote(what, safe='')}", _query({"format": format, **options}))
        attempt = 0
        while True:
            attempt += 1
            req = urllib.request.Request(url, method="GET")
            req.add_unredirected_header("Authorization", f"Bearer {self.token}")
            req.add_header("User-Agent", f"concord-client-python/{__version__}")
            try:
                written = 0
                # Written beside and renamed at the end: a broken transfer leaves no half file under `path`.
                part = f"{os.fspath(path)}.part"
                try:
                    with self._opener.open(req, timeout=self.timeout) as res, open(part, "wb") as out:
                        while True:
                            chunk = res.read(1 << 16)
                            if not chunk:
                                break
                            out.write(chunk)
                            written += len(chunk)
                    os.replace(part, os.fspath(path))
                    return written
                finally:
                    if os.path.exists(part):
                        os.remove(part)
            except urllib.error.HTTPError as err:
                error = ConcordError.from_answer(err.code, dict(err.headers.items()) if err.headers else {}, err.read() if err.fp else b"")
                wait = self._retry_wait(error, attempt)
                if wait is None:
                    raise error from None
                time.sleep(wait)
            except (urllib.error.URLError, ConnectionError, TimeoutError) as err:
                # The transfer broke off (or never started): the whole file is asked for again.
                if attempt > self.retries:
                    raise ConcordError(0, "Connection failed", f"GET {url}: {getattr(err, 'reason', err)}") from None
                time.sleep(self._backoff(attempt))

    def export_df(self, project: str, what: str, **options: Any):
        """The export as a pandas DataFrame (columns in the export's order). Needs pandas installed."""
        try:
            import pandas as pd  # type: ignore[import-not-found]
        except ImportError:
            raise ImportError("export_df needs pandas (pip install pandas, or apt install python3-pandas); export() gives the same rows as dicts.") from None
        rows = self.export(project, what, **options)
        columns: List[str] = []
        seen = set()
        for r in rows:
            for k in r:
                if k not in seen:
                    seen.add(k)
                    columns.append(k)
        return pd.DataFrame.from_records(rows, columns=columns)

    def report(self, project: str, task: Union[int, str], **options: Any) -> Dict[str, Any]:
        """A task's report as its page shows it: inter-annotator statistics with intervals and judge–human
        agreement per judge. ``options``: ``reference`` (majority, each, adjudicated), ``unparsed``
        (count-as-wrong, exclude, as:LABEL) …"""
        return self._json("GET", f"{self._p(project)}/tasks/{task}/report", options)

    # -- tasks -----------------------------------------------------------------------------------------

    def tasks(self, project: str) -> List[Dict[str, Any]]:
        """The project's annotation tasks (an annotator's token sees their own), every page."""
        return list(self._pages(f"{self._p(project)}/tasks", {"limit": MAX_PAGE}))

    def task(self, project: str, task_id: Union[int, str]) -> Dict[str, Any]:
        """One task: its settings and progress per annotator."""
        return self._json("GET", f"{self._p(project)}/tasks/{task_id}")

    def create_task(self, project: str, idempotency_key: Optional[str] = None, **definition: Any) -> Dict[str, Any]:
        """Creates an annotation task with the New task form's fields (``name``, ``kind``, …); returns it."""
        return self._post_json(f"{self._p(project)}/tasks", definition, idempotency_key)

    def close_task(self, project: str, task_id: Union[int, str], idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        """Closes a task (no new labels); returns it."""
        return self._json("POST", f"{self._p(project)}/tasks/{task_id}/close", idempotency_key=idempotency_key or str(uuid.uuid4()))

    def reopen_task(self, project: str, task_id: Union[int, str], idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        """Reopens a closed task; returns it."""
        return self._json("POST", f"{self._p(project)}/tasks/{task_id}/reopen", idempotency_key=idempotency_key or str(uuid.uuid4()))

    # -- runs ------------------------------------------------------------------------------------------

    def create_run(self, project: str, idempotency_key: Optional[str] = None, **definition: Any) -> Dict[str, Any]:
        """Starts a run with the run form's definition; returns the run."""
        return self._post_json(f"{self._p(project)}/runs", definition, idempotency_key)

    def runs(self, project: str) -> List[Dict[str, Any]]:
        """The project's runs (every page)."""
        return list(self._pages(f"{self._p(project)}/runs", {"limit": MAX_PAGE}))

    def run(self, project: str, run_id: Union[int, str]) -> Dict[str, Any]:
        """A run's status, progress and ETA."""
        return self._json("GET", f"{self._p(project)}/runs/{run_id}")

    def run_action(self, project: str, run_id: Union[int, str], action: str, idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        """``pause``, ``resume``, ``cancel`` or ``retry-failed`` a run; returns the run."""
        if action not in RUN_ACTIONS:
            raise ValueError(f"run_action: action must be one of {', '.join(RUN_ACTIONS)}, not {action!r}.")
        return self._json("POST", f"{self._p(project)}/runs/{run_id}/{action}", idempotency_key=idempotency_key or str(uuid.uuid4()))

    def run_results(self, project: str, run_id: Union[int, str], **options: Any) -> Json:
        """A run's results as its results page shows them."""
        return self._json("GET", f"{self._p(project)}/runs/{run_id}/results", options)


def read_csv_rows(text: str) -> List[Dict[str, str]]:
    """Rows of an exported CSV as dicts (every value a string; empty = missing)."""
    return list(csv.DictReader(io.StringIO(text)))
