#!/usr/bin/env python3
"""A command-line client for the shared-task leaderboard's JSON API. One file, standard
library only (Python 3.10+): copy it anywhere.

    export LEADERBOARD_URL=https://leaderboard.example.org LEADERBOARD_TOKEN=lbt_...
    python leaderboard_client.py submit TASK predictions.csv [--description "run 2"]
    python leaderboard_client.py board TASK [--calibrated] [--sort macro_f1] [--columns macro_f1,kappa] [--page 2]

``submit`` uploads (showing progress), waits for the score and prints what the task's feedback
policy lets you see as a table; ``board`` prints the leaderboard. Create a token on the site
under Your account > API tokens. Exit status: 0 done, 1 refused or failed, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

CHUNK = 64 * 1024
DEFAULT_COLUMNS = ("macro_f1", "macro_recall", "accuracy", "kappa", "mcc")
"""Columns ``board`` shows by default, after the one it sorts by (those the task has)."""


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{message} ({status} {code})")
        self.status, self.code, self.message = status, code, message


class Client:
    def __init__(self, base_url: str, token: str | None, *, timeout: float = 60) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, *, body=None, headers: dict | None = None) -> dict:
        url = path if path.startswith("http") else f"{self.base_url}/api{path}"
        headers = {"Accept": "application/json", **(headers or {})}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            try:
                data = json.loads(error.read().decode("utf-8"))
            except ValueError:
                data = {}
            raise ApiError(error.code, data.get("code", "HTTP_ERROR"), data.get("message", error.reason)) from None

    def get(self, path: str, **params) -> dict:
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        return self.request("GET", path + (f"?{query}" if query else ""))

    def upload(self, task: str, path: str, description: str, progress) -> dict:
        """POST the file as multipart/form-data, streamed in chunks; ``progress(sent, total)``."""
        boundary = uuid.uuid4().hex
        name = os.path.basename(path).replace('"', "_")
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="description"\r\n\r\n{description}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: text/csv\r\n\r\n"
        ).encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        size = os.path.getsize(path)
        total = len(head) + size + len(tail)

        def body():
            sent = len(head)
            yield head
            with open(path, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    sent += len(chunk)
                    progress(sent, total)
                    yield chunk
            yield tail
            progress(total, total)

        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(total)}
        return self.request("POST", f"/tasks/{urllib.parse.quote(task)}/submissions", body=body(), headers=headers)


def value_text(value) -> str:
    if value is None:
        return "undefined"
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * width for width in widths))
    lines += [
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    return "\n".join(lines)


def progress_bar(out):
    def show(sent: int, total: int) -> None:
        filled = int(30 * sent / total) if total else 30
        out.write(f"\rUploading [{'#' * filled}{'.' * (30 - filled)}] {sent:,}/{total:,} bytes")
        if sent >= total:
            out.write("\n")
        out.flush()

    return show


def score_table(submission: dict) -> str:
    if submission.get("metrics"):
        rows = [
            [
                m["column"],
                value_text(m["raw"]),
                value_text(m["calibrated"]),
                m["rank"] or "–",
                m["calibrated_rank"] or "–",
            ]
            for m in submission["metrics"]
        ]
        return table(["metric", "raw", "calibrated", "rank", "rank (calibrated)"], rows)
    if submission.get("primary") is not None:
        return table(["metric", "score"], [[submission["primary_metric"], submission["primary"]]])
    return "The file was valid and has been scored; the task shows no scores until its results are public."


def submit(client: Client, args, out) -> int:
    created = client.upload(args.task, args.file, args.description, progress_bar(out))
    out.write(f"Submission #{created['id']} is stored ({created['status']}). {created['page']}\n")
    deadline = time.monotonic() + args.wait
    submission = client.request("GET", created["url"])
    while submission["status"] in ("queued", "scoring") and time.monotonic() < deadline:
        out.write(f"\rWaiting for the score: {submission['status']}…")
        out.flush()
        time.sleep(args.poll)
        submission = client.request("GET", created["url"])
    out.write(f"\rStatus: {submission['status']}{' ' * 20}\n")
    if submission["status"] == "failed":
        out.write(f"Scoring failed: {submission['failure']}\n")
        return 1
    if submission["status"] != "scored":
        out.write(f"Still {submission['status']} after {args.wait:g} s; see {created['page']}\n")
        return 1
    out.write(score_table(submission) + "\n")
    return 0


def board(client: Client, args, out) -> int:
    data = client.get(
        f"/tasks/{urllib.parse.quote(args.task)}/leaderboard",
        calibrated="true" if args.calibrated else None,
        sort=args.sort,
        page=args.page,
        per_page=args.per_page,
    )
    ids = [column["id"] for column in data["columns"]]
    wanted = (
        args.columns.split(",")
        if args.columns
        else [data["sort"]] + [f"{key}_c" if args.calibrated else key for key in DEFAULT_COLUMNS]
    )
    shown = [column for column in dict.fromkeys(wanted) if column in ids]
    unknown = [column for column in wanted if column not in ids]
    if args.columns and unknown:
        out.write(f"No such column: {', '.join(unknown)}. Columns: {', '.join(ids)}\n")
        return 2
    rows = [
        [row["name"], row["kind"]] + [f"{value_text(row['values'][c])} ({row['ranks'][c] or '–'})" for c in shown]
        for row in data["rows"]
    ]
    out.write(f"{data['task']['title']}: sorted by {data['sort']}; value (rank)\n")
    out.write(table(["team", "kind", *shown], rows) + "\n")
    if data["pages"] > 1:
        out.write(f"Page {data['page']} of {data['pages']} ({data['teams']} teams): --page N for another\n")
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    main.add_argument("--url", default=os.environ.get("LEADERBOARD_URL", "http://127.0.0.1:8000"))
    main.add_argument("--token", default=os.environ.get("LEADERBOARD_TOKEN"), help="or LEADERBOARD_TOKEN")
    commands = main.add_subparsers(dest="command", required=True)
    up = commands.add_parser("submit", help="upload a prediction file, wait for its score, print it")
    up.add_argument("task")
    up.add_argument("file")
    up.add_argument("--description", default="")
    up.add_argument("--wait", type=float, default=600, help="seconds to wait for the score (default 600)")
    up.add_argument("--poll", type=float, default=2, help="seconds between status checks (default 2)")
    show = commands.add_parser("board", help="print a task's leaderboard")
    show.add_argument("task")
    show.add_argument("--calibrated", action="store_true", help="the prevalence-calibrated columns")
    show.add_argument("--sort", help="a column id, e.g. kappa or recall[neutral]")
    show.add_argument("--columns", help="comma-separated column ids to show")
    show.add_argument("--page", type=int, default=1, help="which page of teams (default 1)")
    show.add_argument("--per-page", type=int, default=100, help="teams a page, at most 1000 (0: every team)")
    return main


def main(argv: list[str] | None = None, out=None) -> int:
    out = out or sys.stdout
    args = parser().parse_args(argv)
    if args.command == "submit" and not os.path.isfile(args.file):
        sys.stderr.write(f"No such file: {args.file}\n")
        return 2
    client = Client(args.url, args.token)
    try:
        return (submit if args.command == "submit" else board)(client, args, out)
    except ApiError as error:
        sys.stderr.write(f"Refused: {error.message} ({error.status} {error.code})\n")
        return 1
    except urllib.error.URLError as error:
        sys.stderr.write(f"Cannot reach {args.url}: {error.reason}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
