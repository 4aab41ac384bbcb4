"""``kb``: export / import a knowledge base with a folder, and the one-page shorthands.

Exit codes: 0 all made; 1 a conflict (on a dry run too), a lint refusal or a refused
file; the hub's own code when it stopped the command (its error ``code`` read as a
sysexits code, ``kb.hub.HUB_EXIT``); 2 usage (a page path the hub would refuse among them:
paths are checked before anything is sent); 65 a file that is not UTF-8; 66 a file that
cannot be read; 69 hub unreachable; 77 token
refused; 78 no hub configured. Every mistake is one sentence on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kb import sync
from kb.folder import Refused
from kb.hub import EX_DATAERR, EX_NOINPUT, EX_USAGE, Config, Hub, Stop
from knowledge_service.domain.pages import paths
from knowledge_service.errors import BadRequest

HISTORY_LIMIT = 200  # the hub's cap on one history read


def page(raw: str) -> str:
    """A page path as the hub resolves it (``../a.md`` is ``/fs/a.md``), checked before anything is sent."""
    try:
        return paths.page_path(raw)
    except BadRequest as refused:
        raise argparse.ArgumentTypeError(f"{raw!r} {refused.message.removeprefix('path: ')}") from None


def history_limit(raw: str) -> int:
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if not 1 <= limit <= HISTORY_LIMIT:
        raise argparse.ArgumentTypeError(f"takes a whole number from 1 to {HISTORY_LIMIT}, not {raw!r}")
    return limit


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="kb", description="A project's knowledge base from the command line.")
    top.add_argument("--project", help="the project (default: HUB_PROJECT)")
    commands = top.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="every page to a folder, with the manifest")
    export.add_argument("--dir", required=True, type=Path)
    export.add_argument("--force", action="store_true", help="write into a folder that holds something")
    export.add_argument(
        "--per-page",
        action="store_true",
        help="read the listing and each page (one request a page) instead of the base's one archive",
    )
    imp = commands.add_parser("import", help="write the pages the folder changed, with a three-way plan")
    imp.add_argument("--dir", required=True, type=Path)
    imp.add_argument("--prune", action="store_true", help="delete pages the manifest names that the folder does not")
    imp.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    get = commands.add_parser("get", help="print a page (or one version of it)")
    get.add_argument("path", type=page)
    get.add_argument("--version")
    put = commands.add_parser("put", help="write a page from a file or stdin")
    put.add_argument("path", type=page)
    put.add_argument("file", nargs="?", default="-")
    put.add_argument("--if-version", help="a version token, or 'absent' to create only")
    ls = commands.add_parser("ls", help="one directory level")
    ls.add_argument("prefix", nargs="?", default="")
    history = commands.add_parser("history", help="a page's versions, newest first")
    history.add_argument("path", type=page)
    history.add_argument("--limit", type=history_limit, default=50, metavar="1..200")
    for sub in (export, imp, get, put, ls, history):
        sub.add_argument("--project", dest="sub_project", help=argparse.SUPPRESS)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        config = Config.load(args.sub_project or args.project)
        with Hub(config) as hub:
            return run(hub, args)
    except Refused as error:
        print(f"kb: refused: {error}", file=sys.stderr)
        print("kb: nothing was written", file=sys.stderr)
        return 1
    except Stop as error:
        print(f"kb: {error.message}", file=sys.stderr)
        return error.code


def run(hub: Hub, args: argparse.Namespace) -> int:
    command = args.command
    if command == "export":
        return sync.export(hub, args.dir, args.force, args.per_page)
    if command == "import":
        if not args.dir.is_dir() or args.dir.is_symlink():
            print(f"kb: {args.dir} is not a directory", file=sys.stderr)
            return EX_USAGE
        return sync.import_(hub, args.dir, args.prune, args.dry_run)
    if command == "get":
        sys.stdout.write(hub.get(args.path, args.version)["content"])
        return 0
    if command == "put":
        written = hub.put(args.path, _text_of(args.file), args.if_version)
        for found in written.get("lint", []):
            print(sync.lint_line(found), file=sys.stderr)
        print(f"{written['path']} {written['version']}")
        return 0
    if command == "ls":
        for entry in hub.listing(args.prefix or None)["entries"]:
            if entry["type"] == "dir":
                print(f"{entry['path']}/\t{entry['children']} entries")
            else:
                print(f"{entry['path']}\t{entry['size_bytes']} bytes")
        return 0
    answer = hub.history(args.path, args.limit)
    for row in answer["versions"]:
        print(f"{row['at']}\t{row['actor']}\t{row['summary']}\t{row['version'] or '-'}")
    return 0


def _text_of(file: str) -> str:
    """The page's text from ``file`` (``-``: stdin), or the one sentence that says why not."""
    name = "stdin" if file == "-" else file
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as error:
        raise Stop(EX_NOINPUT, f"{name} cannot be read: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Stop(EX_DATAERR, f"{name} is not UTF-8 text (byte {error.start} is not)") from None


if __name__ == "__main__":
    sys.exit(main())
