"""Markdown read by markdown-it-py, as a reader sees it, with a map back to the file's lines.

The parser is CommonMark with tables and strikethrough, and mdit-py-plugins for what real
documentation uses: front matter, admonitions (``!!! note``, ``???``), footnotes, attribute lists
(``{ #id .class }``), definition lists and task lists. Its tokens are written in the common shape
(``layout.py``): a heading a ``#`` line, a paragraph its lines with the inline markup gone (a link
is its words, code its characters, emphasis its words), a list item a ``- `` line, a table its rows,
code fenced. What a reader does not read is left out: HTML comments and tags (an HTML block is its
words), footnote markers (``[^1]``), attribute lists, an admonition's ``!!!`` line and title,
images. A footnote's text is a paragraph where markdown-it puts it, at the end.

Front matter stays at the top of the text as it was written (``---`` lines around its YAML): it is
metadata (its date, what a document supersedes), never a chunk or a statement.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.admon import admon_plugin
from mdit_py_plugins.attrs import attrs_block_plugin, attrs_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from local_engine.ingestion.layout import Layout

VALUE = r"""(?:[#.][\w:-]+|[\w-]+=(?:"[^"\n]*"|'[^'\n]*'|[^\s}]+))"""
ATTRIBUTES = re.compile(rf"[ \t]*\{{:?[ \t]*{VALUE}(?:[ \t]+{VALUE})*[ \t]*\}}")
"""An attribute list MkDocs reads (``{ #id }``, ``{: .class key=value }``): not text."""
COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
TAG = re.compile(r"</?[A-Za-z][^>]*>|<![A-Za-z][^>]*>|<\?.*?\?>", re.DOTALL)
UNREAD_HTML = re.compile(r"\s*<(script|style|textarea)\b", re.IGNORECASE)
HTML_TABLE = re.compile(r"<t[dhr]\b", re.IGNORECASE)

_PARSER = (
    MarkdownIt("commonmark")
    .enable(["table", "strikethrough"])
    .use(front_matter_plugin)
    .use(admon_plugin)
    .use(footnote_plugin)
    .use(attrs_plugin)
    .use(attrs_block_plugin)
    .use(deflist_plugin)
    .use(tasklists_plugin)
)


def _keep_lines(found: re.Match[str]) -> str:
    return "\n" * found.group(0).count("\n")


def _inline(token: Token) -> list[tuple[str, int]]:
    """An inline token's lines as a reader reads them, each with its file line (1-based)."""
    assert token.map is not None
    line = token.map[0] + 1
    lines: list[tuple[str, int]] = [("", line)]
    for child in token.children or []:
        if child.type in ("softbreak", "hardbreak"):
            line += 1
            lines.append(("", line))
        elif child.type in ("text", "code_inline", "math_inline"):
            words = ATTRIBUTES.sub("", child.content) if child.type == "text" else child.content
            lines[-1] = (lines[-1][0] + words, lines[-1][1])
        elif child.type == "html_inline":
            line += child.content.count("\n")  # a tag or comment across lines: the lines after it stay theirs
    return lines


def _html_text(content: str) -> list[str]:
    """An HTML block's words, line by line: comments and tags gone, entities read."""
    if UNREAD_HTML.match(content):
        return []
    content = TAG.sub(_keep_lines, COMMENT.sub(_keep_lines, content))
    return [html.unescape(line) for line in content.split("\n")]


class _Writer:
    """markdown-it's tokens written in the common shape (:data:`TOKENS` says how)."""

    TOKENS: ClassVar[dict[str, Callable[[_Writer, Token], None]]] = {}

    def __init__(self) -> None:
        self.layout = Layout()
        self.context = "prose"  # what the next inline token is: prose, heading, title or cell
        self.level = 1
        self.items: list[bool] = []  # for each list item open: its first paragraph is still to come
        self.rows: list[tuple[list[str], int]] = []

    def write(self, tokens: list[Token]) -> None:
        for token in tokens:
            write = self.TOKENS.get(token.type)
            if write is not None:
                write(self, token)

    def front_matter(self, token: Token) -> None:
        if token.content.strip():
            self.layout.verbatim(["---", *token.content.split("\n"), "---"], 1)

    def heading_open(self, token: Token) -> None:
        self.context, self.level = "heading", int(token.tag[1:])

    def title_open(self, token: Token) -> None:
        self.context = "title"

    def cell_open(self, token: Token) -> None:
        self.context = "cell"

    def inline(self, token: Token) -> None:
        context, self.context = self.context, "prose"
        lines = _inline(token)
        if context == "heading":
            self.layout.heading(self.level, " ".join(text for text, _ in lines), lines[0][1])
        elif context == "cell" and self.rows:
            self.rows[-1][0].append(" ".join(text for text, _ in lines))
        elif context == "prose":
            item = bool(self.items) and self.items[-1]
            if item:
                self.items[-1] = False
            self.layout.prose(lines, item=item)

    def item_open(self, token: Token) -> None:
        self.items.append(True)

    def item_close(self, token: Token) -> None:
        self.items.pop()

    def code(self, token: Token) -> None:
        assert token.map is not None
        first = token.map[0] + (2 if token.type == "fence" else 1)
        self.layout.code(token.content.removesuffix("\n").split("\n"), first)
        if self.items:
            self.items[-1] = False

    def html_block(self, token: Token) -> None:
        """An HTML block's words: paragraphs (apart where a line is blank), or a table's rows."""
        assert token.map is not None
        said = [(text, token.map[0] + 1 + number) for number, text in enumerate(_html_text(token.content))]
        if HTML_TABLE.search(token.content):
            self.layout.table([([text], line) for text, line in said if text.strip()])
            return
        run: list[tuple[str, int]] = []
        for text, line in [*said, ("", 0)]:
            if text.strip():
                run.append((text, line))
            elif run:
                self.layout.prose(run)
                run = []

    def table_open(self, token: Token) -> None:
        self.rows = []

    def row_open(self, token: Token) -> None:
        self.rows.append(([], (token.map[0] + 1) if token.map else self.layout.at[-1] if self.layout.at else 1))

    def table_close(self, token: Token) -> None:
        self.layout.table(self.rows)
        self.rows = []


_Writer.TOKENS.update(
    {
        "front_matter": _Writer.front_matter,
        "heading_open": _Writer.heading_open,
        "admonition_title_open": _Writer.title_open,
        "th_open": _Writer.cell_open,
        "td_open": _Writer.cell_open,
        "inline": _Writer.inline,
        "list_item_open": _Writer.item_open,
        "list_item_close": _Writer.item_close,
        "fence": _Writer.code,
        "code_block": _Writer.code,
        "html_block": _Writer.html_block,
        "table_open": _Writer.table_open,
        "tr_open": _Writer.row_open,
        "table_close": _Writer.table_close,
    }
)


def read(text: str) -> tuple[str, list[int]]:
    """The file's text as a reader sees it, and for each of its lines the file's line."""
    writer = _Writer()
    writer.write(_PARSER.parse(text))
    return writer.layout.written()
