"""The engine's common shape, written with a map back to the file's lines.

Every structured format (reStructuredText, Markdown) is read by its own parser and written here as
the text a reader sees, in the one shape the later stages read (``extraction.blocks`` finds its
blocks with markdown-it): a heading is a ``#`` line, a paragraph its lines, a list item a ``- ``
line, a table ``| a | b |`` rows under a ``| --- |`` row, code a fenced block, and one blank line
between two blocks (none between two items of a list). No inline markup is written: what is in
the text is what a person reads, so a statement's text is its excerpt, white space folded.

A line of prose that would start a block in that shape (``#``, ``>``, ``-``, ``1.``, a fence, an
HTML tag …) begins with a no-break space, which is white space to a reader and to a statement but
text to markdown-it, so the words stay prose. Each line written carries the line of the file it
came from (1-based): :meth:`Layout.written` answers the text and those lines, one a line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

NBSP = "\u00a0"
BLOCK_START = re.compile(r"[#>+*=_~`|<\[-]|\d{1,9}[.)]")
"""What a prose line may not start with: it would open a heading, quote, list, rule, fence, table,
HTML block or link definition in the common shape."""
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
"""A line that could close a fence: one longer than any opens the block around them."""


@dataclass
class Layout:
    """The text being written, a line at a time, each with the file's line it came from."""

    lines: list[str] = field(default_factory=list)
    at: list[int] = field(default_factory=list)
    kind: str = ""  # the last block's: heading, prose, item, code, table or verbatim

    def _open(self, kind: str, line: int) -> None:
        """A new block starting at the file's ``line``: a blank line before it, unless the file has
        none there and the shape needs none (a heading or a fence; what follows a heading, front
        matter or a fence; a list's next item), so a file with nothing to take away is written as
        it is."""
        if self.lines:
            joined = kind in ("heading", "code") or self.kind in ("heading", "verbatim", "code")
            if not (line == self.at[-1] + 1 and (joined or kind == self.kind == "item")):
                self._put("", self.at[-1] + 1)
        self.kind = kind

    def _put(self, text: str, line: int) -> None:
        self.lines.append(text)
        self.at.append(max(1, line))

    def heading(self, level: int, text: str, line: int) -> None:
        words = " ".join(text.split())
        if words:
            self._open("heading", line)
            self._put("#" * min(max(level, 1), 6) + " " + words, line)

    def prose(self, lines: Sequence[tuple[str, int]], item: bool = False) -> None:
        """A paragraph (or, ``item``, a list item): its lines with their file lines; blank ones
        are left out, so it stays one paragraph."""
        kept = [(text.strip(), line) for text, line in lines if text.strip()]
        if not kept:
            return
        self._open("item" if item else "prose", kept[0][1])
        for number, (text, line) in enumerate(kept):
            safe = NBSP + text if BLOCK_START.match(text) else text
            self._put("- " + safe if item and number == 0 else safe, line)

    def code(self, lines: Sequence[str], first: int) -> None:
        """A code or literal block, fenced: never prose, whatever it holds."""
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        if not any(line.strip() for line in lines):
            return
        longest = max((len(found.group(1)) for line in lines if (found := FENCE.match(line))), default=2)
        fence = "`" * max(3, longest + 1)
        self._open("code", first - 1)
        self._put(fence, first - 1)
        for number, line in enumerate(lines):
            self._put(line.rstrip(), first + number)
        self._put(fence, first + len(lines))

    def table(self, rows: Sequence[tuple[Sequence[str], int]]) -> None:
        """Rows of cells (the first the header), each with its file line: never prose."""
        kept = [([" ".join(c.split()).replace("|", "\\|") for c in cells], line) for cells, line in rows if cells]
        kept = [(cells, line) for cells, line in kept if any(cells)]
        if not kept:
            return
        (header, line), *body = kept
        self._open("table", line)
        self._put("| " + " | ".join(header) + " |", line)
        self._put("|" + " --- |" * len(header), line)
        for cells, row_line in body:
            self._put("| " + " | ".join(cells) + " |", row_line)

    def verbatim(self, lines: Sequence[str], first: int) -> None:
        """Lines as they are (a document's front matter, which stays metadata)."""
        self._open("verbatim", first)
        for number, line in enumerate(lines):
            self._put(line, first + number)

    def written(self) -> tuple[str, list[int]]:
        """The text (ending with a newline) and, for each of its lines, the file's line."""
        return ("\n".join(self.lines) + "\n" if self.lines else ""), list(self.at)
