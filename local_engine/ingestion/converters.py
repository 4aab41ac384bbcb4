"""One converter per format, found in a registry (the ``parsing_extraction`` stage).

A converter takes a file's bytes and answers :class:`Extracted`: the text every later stage
reads (chunks, statements and evidence are offsets into it), which parser made it, the MIME
type, what the document says about itself (its date) and, where the text is not the file as
written, the file's line of each of its lines. Each format is read by a library made for it —
docutils reads reStructuredText (``restructuredtext.py``), markdown-it-py with its plugins reads
Markdown (``markdown.py``), BeautifulSoup reads HTML, pypdf reads PDF, python-docx reads DOCX — and
written as the text a reader sees in one shape (``layout.py``: headings as ``#`` lines), so chunking
is heading-aware whatever the format was.

A file no converter accepts, or one its converter cannot read, raises :class:`Unreadable`
with FORAGER's ``code`` and a sentence; the pipeline records it on the source (``failed``)
and the job goes on. Adding a format is one class appended to :data:`CONVERTERS`.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, ClassVar, Protocol

import yaml

MAX_UNZIPPED_BYTES = 200 * 1024 * 1024
"""A DOCX whose parts unpack to more than this is refused before it is parsed (a zip bomb)."""
MAX_EXTRACTED_CHARS = 5_000_000
"""A source's extracted text is cut here (a warning on the source): 5 M characters."""


class Unreadable(Exception):
    """The file cannot be read as its format: FORAGER's ``{code, message}``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[type[Unreadable], tuple[str, str]]:  # raised in a worker, read here
        return Unreadable, (self.code, self.message)


@dataclass
class Extracted:
    text: str
    parser: str
    mime_type: str
    type: str
    document_date: str | None = None
    page_starts: list[int] = field(default_factory=list)  # PDF: the offset each page starts at
    line_map: list[int] = field(default_factory=list)  # each line's file line (none: the file's own lines)
    warnings: list[str] = field(default_factory=list)


class Converter(Protocol):
    def accepts(self, name: str, head: bytes) -> bool: ...

    def convert(self, name: str, data: bytes) -> Extracted: ...


def _suffix(name: str) -> str:
    return PurePosixPath(name.lower()).suffix


def _utf8(name: str, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise Unreadable("binary_content", f"{name} holds binary data, not text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable("not_utf8", f"{name} is not UTF-8 text (byte {exc.start} cannot be read).") from None


FRONTMATTER = re.compile(r"\A---\n(.*?)\n(?:---|\.\.\.)\n", re.DOTALL)
DATE_KEYS = ("document_date", "date", "updated", "created")


def _frontmatter_date(text: str) -> str | None:
    match = FRONTMATTER.match(text)
    if not match:
        return None
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    for key in DATE_KEYS:
        value = data.get(key)
        if value is not None and re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(value)[:10]):
            return str(value)[:10]
    return None


class MarkdownConverter:
    """Markdown read by markdown-it-py and its plugins (``markdown.py``): the text a reader sees,
    its front matter kept at the top as metadata, with the file's line of each line. Its date
    comes from the front matter (``document_date``, ``date``, …)."""

    suffixes = (".md", ".markdown", ".mdown", ".mkd")

    def accepts(self, name: str, head: bytes) -> bool:
        return _suffix(name) in self.suffixes

    def convert(self, name: str, data: bytes) -> Extracted:
        from local_engine.ingestion import markdown

        source = _utf8(name, data).replace("\r\n", "\n").replace("\r", "\n")
        text, lines = markdown.read(source)
        return Extracted(text, "markdown", "text/markdown", "markdown", _frontmatter_date(source), line_map=lines)


RST_MARKUP = re.compile(
    r"^\.\. +(?:_[^:\n]+:|[\w.:+-]+ ?::)|:[\w.:+-]+:`|^\S[^\n]*\n([=\-~^\"'`#*+:.<>_])\1{2,} *$",
    re.MULTILINE,
)
"""What marks a ``.txt`` file as reStructuredText: a directive or label, a role, an underlined title."""


class RestructuredTextConverter:
    """reStructuredText read by docutils (``restructuredtext.py``), Sphinx's roles and directives
    read generically: the text a reader sees, with the file's line of each line. A ``.txt`` file
    whose first kilobyte uses reStructuredText's markup is read as one (Sphinx projects name their
    pages so). A file docutils fails on is read as plain text, with a warning."""

    suffixes = (".rst", ".rest")

    def accepts(self, name: str, head: bytes) -> bool:
        suffix = _suffix(name)
        if suffix in self.suffixes:
            return True
        return suffix == ".txt" and RST_MARKUP.search(head.decode("utf-8", "ignore").replace("\r\n", "\n")) is not None

    def convert(self, name: str, data: bytes) -> Extracted:
        from local_engine.ingestion import restructuredtext

        source = _utf8(name, data)
        try:
            text, lines = restructuredtext.read(source)
        except Exception as exc:  # docutils failing on a strange file: its words are still text
            warning = f"docutils could not read it ({type(exc).__name__}): read as plain text"
            return Extracted(source, "text", "text/x-rst", "restructuredtext", warnings=[warning])
        return Extracted(text, "restructuredtext", "text/x-rst", "restructuredtext", line_map=lines)


class TextConverter:
    """Plain text: ``.txt`` and friends, and any other file whose first kilobyte is UTF-8 text with
    no NUL byte (``LICENSE``, ``METADATA``, ``LICENSE.APACHE``, ``NOTICE``). It is asked last."""

    suffixes = (".txt", ".text", ".csv", ".log", ".cfg", ".ini", ".toml", ".yaml", ".yml", ".json")

    def accepts(self, name: str, head: bytes) -> bool:
        if _suffix(name) in self.suffixes:
            return True
        if not head or b"\x00" in head:
            return False
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            return exc.start >= len(head) - 3  # a character cut by the kilobyte's end, not binary
        return True

    def convert(self, name: str, data: bytes) -> Extracted:
        return Extracted(_utf8(name, data), "text", "text/plain", "text")


class HtmlConverter:
    """HTML read by BeautifulSoup (Python's own HTML parser under it): headings become
    ``#`` lines, paragraphs, list items, table rows and preformatted blocks become
    paragraphs; scripts, styles and templates are dropped."""

    suffixes = (".html", ".htm", ".xhtml")
    BLOCKS: ClassVar[tuple[str, ...]] = (
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "p",
        "li",
        "tr",
        "pre",
        "blockquote",
        "dt",
        "dd",
    )

    def accepts(self, name: str, head: bytes) -> bool:
        return _suffix(name) in self.suffixes

    def convert(self, name: str, data: bytes) -> Extracted:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(data, "html.parser")
        for dropped in soup(["script", "style", "template", "noscript", "head"]):
            dropped.decompose()
        blocks: list[str] = []
        for element in soup.find_all(self.BLOCKS):
            if element.find_parent(self.BLOCKS) is not None and element.name not in ("li", "tr"):
                continue  # its text is its parent block's
            if element.name == "tr":
                cells = [" ".join(c.get_text(" ").split()) for c in element.find_all(["td", "th"])]
                words = " | ".join(c for c in cells if c)
            else:
                nested = element.find_all(["li", "tr"]) if element.name == "li" else []
                for inner in nested:
                    inner.extract()
                words = " ".join(element.get_text(" ").split())
            if not words:
                continue
            if element.name.startswith("h") and element.name[1:].isdigit():
                words = "#" * int(element.name[1]) + " " + words
            blocks.append(words)
        if not blocks:
            body = " ".join(soup.get_text(" ").split())
            if body:
                blocks.append(body)
        return Extracted("\n\n".join(blocks) + "\n" if blocks else "", "html", "text/html", "html")


class PdfConverter:
    """PDF read by pypdf, page by page: a page's text is a paragraph run, pages apart by a
    blank line (the location of an excerpt names its page)."""

    suffixes = (".pdf",)

    def accepts(self, name: str, head: bytes) -> bool:
        return _suffix(name) in self.suffixes or head.startswith(b"%PDF-")

    def convert(self, name: str, data: bytes) -> Extracted:
        from pypdf import PdfReader
        from pypdf.errors import LimitReachedError, PdfReadError

        try:
            reader = PdfReader(io.BytesIO(data))
            encrypted = reader.is_encrypted
            pages = [] if encrypted else [_page_text(page) for page in reader.pages]
        except LimitReachedError:
            raise Unreadable("too_large", f"{name} holds a stream that unpacks past pypdf's limits.") from None
        except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
            raise Unreadable("unreadable_pdf", f"{name} is not a PDF pypdf can read ({exc}).") from None
        if encrypted:
            raise Unreadable("encrypted", f"{name} is an encrypted PDF: its text cannot be read.")
        text = ""
        starts: list[int] = []
        for page in pages:
            starts.append(len(text))
            text += "\n".join(line.rstrip() for line in page.replace("\r\n", "\n").split("\n")).strip("\n") + "\n\n"
        return Extracted(text, "pdf", "application/pdf", "pdf", page_starts=starts)


def _page_text(page: Any) -> str:
    """A page's text. Its content stream is decoded first, so a stream past pypdf's limits (a
    flate bomb) raises here: ``extract_text`` alone would log it and answer an empty page."""
    contents = page.get_contents()
    if contents is not None:
        contents.get_data()
    return str(page.extract_text() or "")


class DocxConverter:
    """DOCX read by python-docx: ``Heading N`` paragraphs become ``#`` lines (``Title``
    one ``#``), other paragraphs and table rows paragraphs."""

    suffixes = (".docx",)

    def accepts(self, name: str, head: bytes) -> bool:
        return _suffix(name) in self.suffixes

    def convert(self, name: str, data: bytes) -> Extracted:
        import zipfile

        import docx

        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                unzipped = sum(member.file_size for member in archive.infolist())
            if unzipped > MAX_UNZIPPED_BYTES:
                raise Unreadable("too_large", f"{name} unpacks to over {MAX_UNZIPPED_BYTES // 1024**2} MB.")
            document = docx.Document(io.BytesIO(data))
        except (zipfile.BadZipFile, KeyError, ValueError) as exc:
            raise Unreadable("unreadable_docx", f"{name} is not a DOCX python-docx can read ({exc}).") from None
        blocks: list[str] = []
        for paragraph in document.paragraphs:
            words = " ".join(paragraph.text.split())
            if not words:
                continue
            style = (paragraph.style.name if paragraph.style is not None else "") or ""
            level = 1 if style == "Title" else int(style[8:]) if re.fullmatch(r"Heading [1-6]", style) else 0
            blocks.append(("#" * level + " " + words) if level else words)
        for table in document.tables:
            for row in table.rows:
                cells = [" ".join(cell.text.split()) for cell in row.cells]
                if any(cells):
                    blocks.append(" | ".join(cells))
        date = None
        created = document.core_properties.created
        if created is not None:
            date = created.date().isoformat()
        text = "\n\n".join(blocks) + "\n" if blocks else ""
        mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        return Extracted(text, "docx", mime, "docx", document_date=date)


CONVERTERS: tuple[Converter, ...] = (
    MarkdownConverter(),
    RestructuredTextConverter(),
    HtmlConverter(),
    PdfConverter(),
    DocxConverter(),
    TextConverter(),
)


def extract(name: str, data: bytes) -> Extracted:
    """The first converter that accepts the file reads it; none: ``unsupported_format``."""
    head = data[:1024]
    for converter in CONVERTERS:
        if converter.accepts(name, head):
            extracted = converter.convert(name, data)
            if len(extracted.text) > MAX_EXTRACTED_CHARS:
                extracted.text = extracted.text[:MAX_EXTRACTED_CHARS]
                extracted.warnings.append(f"the text was cut at {MAX_EXTRACTED_CHARS:,} characters")
            return extracted
    raise Unreadable("unsupported_format", f"{name}: no converter reads this kind of file.")
