"""reStructuredText read by docutils, as a reader sees it, with a map back to the file's lines.

The file is parsed to a doctree (``publish_doctree``: no report below level 5 and no halt, no file
insertion, no raw, no configuration files read, no syntax highlighting, sections kept as sections)
and the doctree written in the common shape (``layout.py``): a section's title a ``#`` line as deep
as the section, a paragraph its lines, a list item or a field a ``- `` line, a table its rows, a
literal or code block fenced. Comments, labels (``.. _name:``), substitution definitions, images,
footnote markers and the errors docutils would report are not text and are left out.

Sphinx's roles and directives, which docutils does not know, are registered generically before a
file is parsed (every name the file uses that docutils does not know), so none is an error:

- a **role** gives its title: ``:ref:`the title <label>``` is "the title", ``:setting:`DEBUG``` is
  "DEBUG", ``:meth:`~a.b.save``` is "save";
- a directive that **describes an object** (``method``, ``function``, ``class``, ``setting``, …,
  :data:`OBJECTS`) gives its signature as a heading one deeper than its section
  (``select_related(*fields)``) and its body's prose;
- one that **shows code** (``code-block``, ``sourcecode``, ``console``, …: :data:`CODE`) a fenced
  block; one that **gives no prose** (``toctree``, ``literalinclude``, ``auto*``, ``only``,
  ``index``, ``currentmodule``, ``highlight``, …: :data:`SILENT`) nothing;
- any other (``versionadded``, ``versionchanged``, ``deprecated``, ``seealso``, ``note``-like
  boxes, a project's own) its body's prose, and for :data:`SAID` the words on its first line
  (after the version, for ``versionadded``).

Every line written carries the file's line it came from (docutils keeps each node's ``line``; a
paragraph's text keeps its source line breaks), so an excerpt names the line a reader finds it on.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any, ClassVar

from docutils import nodes  # type: ignore[import-untyped]
from docutils.core import publish_doctree  # type: ignore[import-untyped]
from docutils.parsers.rst import Directive, directives, roles  # type: ignore[import-untyped]
from docutils.parsers.rst.languages import en  # type: ignore[import-untyped]
from docutils.statemachine import StringList  # type: ignore[import-untyped]

from local_engine.ingestion.layout import Layout

SETTINGS: dict[str, Any] = {
    "report_level": 5,
    "halt_level": 5,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "input_encoding": "utf-8",
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "syntax_highlight": "none",
    "smart_quotes": False,
    "_disable_config": True,
    "line_length_limit": 10_000_000,
}
NAME = r"(?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*"
"""docutils' own pattern of a role's or directive's name."""
ROLE_NAMES = re.compile(rf"(?<![\w`]):({NAME}):(?=`)|(?<=`):({NAME}):(?![\w`])")
DIRECTIVE_NAMES = re.compile(rf"^[ \t]*\.\.[ \t]+(?:\|[^|\n]+\|[ \t]+)?({NAME})[ \t]?::", re.MULTILINE)
EXPLICIT_TITLE = re.compile(r"^(.+?)\s*(?<!\x00)<([^<]*?)>$", re.DOTALL)
PROBLEM = re.compile(r"^(?::[\w.:+-]+:)?[`|*]*(.*?)[`|*]*_{0,2}(?::[\w.:+-]+:)?$", re.DOTALL)
LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""What ``str.splitlines`` (and so docutils) counts as a line's end and an editor does not."""


def _words(names: str) -> frozenset[str]:
    return frozenset(names.split())


OBJECTS = _words(
    """function method class attribute data exception decorator decoratormethod staticmethod classmethod
    abstractmethod property type var member macro struct union enum enumerator concept setting envvar option
    cmdoption describe object confval event templatetag templatefilter fieldlookup lookup django-admin
    django-admin-option signal opcode pdbcommand monitoring-event"""
)
CODE = _words("code code-block sourcecode console testcode testoutput doctest productionlist")
SILENT = _words(
    """toctree literalinclude only index currentmodule highlight highlightlang module default-domain graphviz
    graph digraph inheritance-diagram tabularcolumns ifconfig include raw contents sectnum section-numbering
    header footer meta title target-notes program sectionauthor moduleauthor codeauthor testsetup testcleanup
    plot autosummary rst-class cssclass"""
)
SAID = _words("versionadded versionchanged deprecated versionremoved deprecated-removed seealso centered")
"""Directives whose first line is words a reader reads (after the version, for the version ones)."""
VERSIONED = _words("versionadded versionchanged deprecated versionremoved deprecated-removed")
LEFT_OUT = _words(
    """comment target substitution_definition pending system_message raw image meta docinfo decoration
    transition problematic label attribution classifier title subtitle"""
)
"""Block nodes that are not text a reader reads (a title is read by its section)."""
NOT_SAID = _words("footnote_reference citation_reference system_message raw comment image")


class _Options(dict[str, Callable[[str | None], Any]]):
    """Any option a directive is given is taken (as it is written), never an error."""

    def __missing__(self, key: str) -> Callable[[str | None], Any]:
        return directives.unchanged  # type: ignore[no-any-return]


def _local(name: str) -> str:
    """A directive's name without its domain (``py:method`` is ``method``)."""
    return name.lower().rsplit(":", 1)[-1]


class _Generic(Directive):  # type: ignore[misc]
    """The base of the generic directives: one optional argument (the whole first line and what
    follows it before a blank line), any option, a body."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = _Options(noindex=directives.flag)

    def _parsed(self, lines: list[str], offset: int) -> list[Any]:
        """``lines`` (starting at the 0-based line ``offset`` of the file) parsed as body text."""
        holder = nodes.container()
        self.state.nested_parse(StringList(lines, items=[("", offset + n) for n in range(len(lines))]), offset, holder)
        return list(holder.children)

    def _body(self) -> list[Any]:
        holder = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, holder)
        return list(holder.children)


class _Prose(_Generic):
    """A directive read for its body's prose (and, for :data:`SAID`, its first line's words)."""

    def run(self) -> list[Any]:
        found: list[Any] = []
        name = _local(self.name)
        if name in SAID and self.arguments:
            said = self.arguments[0].split("\n")
            if name in VERSIONED:
                said[0] = said[0].partition(" ")[2]
            found = self._parsed(said, self.lineno - 1)
        return found + self._body()


class _Object(_Generic):
    """An object's description: its signatures as a heading-like line, then its body's prose."""

    def run(self) -> list[Any]:
        argument = self.arguments[0] if self.arguments else ""
        signatures: list[Any] = []
        for number, line in enumerate(argument.split("\n")):
            words = " ".join(line.split()).rstrip("\\").strip()
            if words:
                signature = nodes.rubric(words, words, classes=["signature"])
                signature.line = self.lineno + number
                signatures.append(signature)
        return signatures + self._body()


class _Code(_Generic):
    """Code shown to the reader: a literal block of its body, whatever its options."""

    def run(self) -> list[Any]:
        text = "\n".join(self.content)
        if not text.strip():
            return []
        block = nodes.literal_block(text, text)
        block.line = self.content_offset + 1
        return [block]


class _Silent(_Generic):
    """A directive that gives the reader no prose (a table of contents, an index entry, a file)."""

    def run(self) -> list[Any]:
        return []


def _role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[Any], list[Any]]:
    """A role docutils does not know: its title (``title <target>`` is ``title``; ``~a.b.c`` is
    ``c``). The line breaks it spanned stay after it, so the paragraph keeps its lines."""
    match = EXPLICIT_TITLE.match(text)
    title = nodes.unescape(match.group(1) if match else text)
    if not match and title.startswith("~"):
        title = title[1:].rsplit(".", 1)[-1]
    title = " ".join(title.lstrip("!~").split()) + "\n" * rawtext.count("\n")
    return [nodes.inline(rawtext, title)], []


def _handler(name: str) -> type[_Generic]:
    local = _local(name)
    if local in CODE:
        return _Code
    if local in SILENT or local.startswith("auto"):
        return _Silent
    if local in OBJECTS:
        return _Object
    return _Prose


_registered: dict[str, set[str]] = {"roles": set(), "directives": set()}


def _register(text: str) -> None:
    """Every role and directive the text names that docutils does not read as Sphinx does,
    registered generically (once a process)."""
    known = _registered["roles"]
    for found in ROLE_NAMES.finditer(text):
        name = (found.group(1) or found.group(2)).lower()
        if name not in known and name not in en.roles:
            roles.register_local_role(name, _role)
        known.add(name)
    known = _registered["directives"]
    for found in DIRECTIVE_NAMES.finditer(text):
        name = found.group(1).lower()
        if name in known:
            continue
        handler = _handler(name)
        if handler is not _Prose or name not in en.directives:  # docutils' own boxes stay its own
            directives.register_directive(name, handler)
        known.add(name)


def _said(node: Any) -> str:
    """An inline node's words, as a reader reads them."""
    if isinstance(node, nodes.Text):
        return str(node.astext())
    if node.tagname in NOT_SAID:
        return ""
    if node.tagname == "problematic":  # a reference to nothing: its words, not its markup
        raw = str(node.astext())
        inner = PROBLEM.match(raw)
        return inner.group(1) if inner and inner.group(1).strip() else raw
    joined = "" if isinstance(node, nodes.TextElement | nodes.Inline) else "\n"  # a cell's paragraphs apart
    return joined.join(_said(child) for child in node.children)


class _Writer:
    """A doctree written in the common shape, node by node (:data:`BLOCKS` says how)."""

    BLOCKS: ClassVar[dict[str, Callable[[_Writer, Any], None]]] = {}

    def __init__(self) -> None:
        self.layout = Layout()
        self.depth = 0
        self.line = 1  # the last file line seen: for a node docutils gave none

    def _line(self, node: Any) -> int:
        line = getattr(node, "line", None)
        if isinstance(line, int) and line > 0:
            self.line = line
        return self.line

    def block(self, node: Any) -> None:
        """A block node written: by :data:`BLOCKS`, else a text element as a paragraph and any
        other (a note, a definition list, a container) as its children."""
        if node.tagname in LEFT_OUT:
            return
        write = self.BLOCKS.get(node.tagname)
        if write is not None:
            write(self, node)
        elif isinstance(node, nodes.TextElement):
            self.paragraph(node)
        else:
            self.children(node)

    def children(self, node: Any) -> None:
        for child in node.children:
            if not isinstance(child, nodes.Text):
                self.block(child)

    def lines(self, node: Any) -> list[tuple[str, int]]:
        first = self._line(node)
        return [(text, first + number) for number, text in enumerate(_said(node).split("\n"))]

    def paragraph(self, node: Any) -> None:
        self.layout.prose(self.lines(node))

    def section(self, node: Any) -> None:
        self.depth += 1
        title = node.children[0] if node.children else None
        if isinstance(title, nodes.title):
            self.layout.heading(self.depth, _said(title), self._line(title) - 1)  # its line is the underline's
        self.children(node)
        self.depth -= 1

    def rubric(self, node: Any) -> None:
        self.layout.heading(self.depth + 1, _said(node), self._line(node))

    def items(self, node: Any) -> None:
        for item in node.children:
            self.item(item, item.children)

    def item(self, item: Any, body: list[Any], name: str = "") -> None:
        """A list item (a field, an option): its first paragraph a ``- `` line (after its name),
        the rest blocks."""
        if body and isinstance(body[0], nodes.paragraph):
            lines = self.lines(body[0])
            if name:
                lines[0] = (f"{name}: {lines[0][0]}", lines[0][1])
            self.layout.prose(lines, item=True)
            body = body[1:]
        elif name:
            self.layout.prose([(name, self._line(item))], item=True)
        for child in body:
            self.block(child)

    def fields(self, node: Any) -> None:
        for field in node.children:  # field_list > field > (field_name, field_body) / option_list_item
            name, body = field.children[0], field.children[-1]
            self.item(field, list(body.children), " ".join(_said(name).split()))

    def code(self, node: Any) -> None:
        self.layout.code(node.astext().split("\n"), self._line(node))

    def line_block(self, node: Any) -> None:
        first = self._line(node)
        said = [_said(line) for line in node.findall(nodes.line)]
        self.layout.prose([(text, first + number) for number, text in enumerate(said)])

    def table(self, node: Any) -> None:
        rows = []
        for row in node.findall(nodes.row):
            cells = [_said(entry) for entry in row.children]
            lines = [self._line(p) for p in row.findall(nodes.TextElement) if getattr(p, "line", None)]
            rows.append((cells, lines[0] if lines else self._line(node)))
        self.layout.table(rows)

    def topic(self, node: Any) -> None:
        if "contents" not in node["classes"]:  # a table of contents is no prose
            self.children(node)

    def titled(self, node: Any) -> None:
        """A box with a title (a note, a sidebar, a footnote): its body, not its title."""
        self.children(node)


_Writer.BLOCKS.update(
    {
        "section": _Writer.section,
        "paragraph": _Writer.paragraph,
        "rubric": _Writer.rubric,
        "bullet_list": _Writer.items,
        "enumerated_list": _Writer.items,
        "field_list": _Writer.fields,
        "option_list": _Writer.fields,
        "literal_block": _Writer.code,
        "doctest_block": _Writer.code,
        "math_block": _Writer.code,
        "line_block": _Writer.line_block,
        "table": _Writer.table,
        "topic": _Writer.topic,
        "sidebar": _Writer.titled,
        "footnote": _Writer.titled,
        "citation": _Writer.titled,
        "term": _Writer.paragraph,
        "caption": _Writer.paragraph,
    }
)


def editors_lines(text: str) -> str:
    """Line ends as an editor counts them (``\\n``, ``\\r\\n``, ``\\r``); the other characters
    docutils would end a line at are spaces."""
    return LINE_BREAKS.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))


def doctree(text: str) -> Any:
    _register(text)
    return publish_doctree(text, settings_overrides={**SETTINGS, "warning_stream": io.StringIO()})


def read(text: str) -> tuple[str, list[int]]:
    """The file's text as a reader sees it, and for each of its lines the file's line."""
    writer = _Writer()
    writer.children(doctree(editors_lines(text)))
    return writer.layout.written()
