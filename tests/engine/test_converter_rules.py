"""What each converter writes, held on real documents the tests build (issue 57: a mutation round
found these unheld; local_engine/README.md, "What a job does" and "How the engine reads a
document"): the converter a file's name or first kilobyte picks, HTML's and DOCX's headings,
paragraphs, list items and table rows, a PDF's pages, the date a document gives itself, and the
limits — binary content in the first 8 KiB, text cut at 5,000,000 characters, a DOCX that unpacks
past 200 MB."""

from __future__ import annotations

import datetime
import io
import zipfile

import docx
import pytest
from pypdf import PdfReader, PdfWriter

from local_engine.ingestion import converters
from tests.documents import pdf_bytes

HTML = (
    b"<html><head><title>Timetable</title><style>p { color: red }</style></head><body>"
    b"<script>var hidden = 'never a statement';</script>"
    b"<h1>Ferry</h1><p>The ferry leaves at <b>nine</b> every morning.</p><h3>Crew</h3>"
    b"<ul><li>Deckhands board first.<ul><li>Cooks board second.</li></ul></li></ul>"
    b"<table><tr><th>Pier</th><th>Time</th></tr><tr><td>Four</td><td></td><td>Nine</td></tr></table>"
    b"<blockquote><p>A quoted line here.</p></blockquote><dl><dt>Tug</dt><dd>A small boat.</dd></dl>"
    b"</body></html>"
)


def _docx(created: datetime.datetime | None = None) -> bytes:
    document = docx.Document()
    document.add_heading("Warehouse", level=0)  # the Title style
    document.add_heading("Bays", level=2)
    document.add_paragraph("Forklifts park in bay seven.")
    table = document.add_table(rows=3, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text, table.cell(1, 0).text = "Bay", "Use", "Seven"
    if created is not None:
        document.core_properties.created = created
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _unreadable(name: str, data: bytes) -> tuple[str, str]:
    with pytest.raises(converters.Unreadable) as refused:
        converters.extract(name, data)
    return refused.value.code, refused.value.message


def test_a_files_name_or_first_kilobyte_picks_its_converter() -> None:
    said = b"The quay opens at dawn every day.\n"
    picked = {
        name: (found.parser, found.mime_type, found.type)
        for name, found in (
            (name, converters.extract(name, data))
            for name, data in (
                ("notes.md", b"# Quay\n\n" + said),
                ("guide.rst", b"Quay\n====\n\n" + said),
                ("sphinx.txt", b"Quay\n====\n\n" + said),  # a .txt written in reStructuredText
                ("plain.txt", said),
                ("LICENSE", said),  # no suffix: UTF-8 text
                ("page.html", b"<p>" + said + b"</p>"),
                ("paper.pdf", pdf_bytes(["The crane lifts timber at dawn."])),
                ("scan.bin", pdf_bytes(["The crane lifts timber at dawn."])),  # %PDF- first
                ("report.docx", _docx()),
            )
        )
    }
    assert picked == {
        "notes.md": ("markdown", "text/markdown", "markdown"),
        "guide.rst": ("restructuredtext", "text/x-rst", "restructuredtext"),
        "sphinx.txt": ("restructuredtext", "text/x-rst", "restructuredtext"),
        "plain.txt": ("text", "text/plain", "text"),
        "LICENSE": ("text", "text/plain", "text"),
        "page.html": ("html", "text/html", "html"),
        "paper.pdf": ("pdf", "application/pdf", "pdf"),
        "scan.bin": ("pdf", "application/pdf", "pdf"),
        "report.docx": (
            "docx",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "docx",
        ),
    }
    assert _unreadable("blob.bin", b"\x00\x01\x02") == (
        "unsupported_format",
        "blob.bin: no converter reads this kind of file.",
    )
    assert _unreadable("EMPTY", b"")[0] == "unsupported_format"  # no suffix and nothing to read


def test_html_is_its_headings_paragraphs_items_and_rows_and_never_its_scripts() -> None:
    found = converters.extract("ferry.html", HTML)
    assert found.text == (
        "# Ferry\n\nThe ferry leaves at nine every morning.\n\n### Crew\n\nDeckhands board first.\n\n"
        "Cooks board second.\n\nPier | Time\n\nFour | Nine\n\nA quoted line here.\n\nTug\n\nA small boat.\n"
    )
    bare = b"<html><body><div>Only a division of words here.</div></body></html>"
    assert converters.extract("bare.html", bare).text == "Only a division of words here.\n"  # no block: the body
    assert converters.extract("empty.html", b"<html><body> </body></html>").text == ""


def test_docx_is_its_title_headings_paragraphs_and_rows_with_the_date_it_was_made() -> None:
    found = converters.extract("w.docx", _docx(datetime.datetime(2025, 6, 7, 8, 9)))
    assert found.text == "# Warehouse\n\n## Bays\n\nForklifts park in bay seven.\n\nBay | Use\n\nSeven | \n"
    assert found.document_date == "2025-06-07"  # a row of empty cells is left out


def test_a_pdf_is_its_pages_a_blank_line_apart_each_starting_where_its_offset_says() -> None:
    found = converters.extract("p.pdf", pdf_bytes(["The crane lifts timber at dawn.", "Forklifts park in bay seven."]))
    first = "The crane lifts timber at dawn.\nForklifts park in bay seven.\n\n"
    assert found.text == first + "The second page says the warehouse closes at six in the evening.\n\n"
    assert found.page_starts == [0, len(first)]


def test_an_encrypted_pdf_is_refused_as_encrypted() -> None:
    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(pdf_bytes(["The crane lifts timber at dawn."]))).pages:
        writer.add_page(page)
    writer.encrypt("secret")
    out = io.BytesIO()
    writer.write(out)
    assert _unreadable("locked.pdf", out.getvalue()) == (
        "encrypted",
        "locked.pdf is an encrypted PDF: its text cannot be read.",
    )


def test_text_is_utf8_without_its_bom_and_binary_only_for_a_nul_in_the_first_8_kib() -> None:
    assert converters.extract("bom.txt", b"\xef\xbb\xbfThe quay opens.\n").text == "The quay opens.\n"
    assert _unreadable("bad.txt", b"The quay \xff opens.\n") == (
        "not_utf8",
        "bad.txt is not UTF-8 text (byte 9 cannot be read).",
    )
    assert _unreadable("nul.txt", b"x" * 8191 + b"\x00") == ("binary_content", "nul.txt holds binary data, not text.")
    assert converters.extract("late.txt", b"x" * 8192 + b"\x00").text == "x" * 8192 + "\x00"


def test_a_file_with_no_suffix_is_text_when_its_first_kilobyte_is_utf8_a_character_cut_at_its_end_aside() -> None:
    for lead in (1023, 1021):  # the kilobyte ends one, or three, bytes into a character
        cut = b"x" * lead + "🚢".encode()
        assert converters.extract("NOTICE", cut).text == "x" * lead + "🚢"
    broken = b"x" * 1020 + b"\xff" + b"x" * 10  # a byte no UTF-8 has, four from the kilobyte's end
    assert _unreadable("NOTICE", broken)[0] == "unsupported_format"
    late = b"x" * 1024 + b"\x00"  # past the first kilobyte: taken as text, then found binary
    assert _unreadable("NOTICE", late)[0] == "binary_content"


def test_text_is_cut_at_5000000_characters_with_a_warning() -> None:
    whole = converters.extract("whole.txt", b"x" * 5_000_000)
    assert (len(whole.text), whole.warnings) == (5_000_000, [])
    cut = converters.extract("long.txt", b"x" * 5_000_001)
    assert (len(cut.text), cut.warnings) == (5_000_000, ["the text was cut at 5,000,000 characters"])


def _docx_unpacking_to(total: int) -> bytes:
    """A real DOCX with a padding part that brings its parts' unpacked size to ``total`` bytes."""
    base = _docx()
    with zipfile.ZipFile(io.BytesIO(base)) as archive:
        held = sum(member.file_size for member in archive.infolist())
        parts = [(member.filename, archive.read(member)) for member in archive.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts:
            archive.writestr(name, data)
        with archive.open("word/media/padding.bin", "w", force_zip64=True) as padding:
            left = total - held
            while left:
                piece = min(left, 1 << 20)
                padding.write(b"\x00" * piece)
                left -= piece
    return out.getvalue()


def test_a_docx_unpacking_past_200_mb_is_refused_and_one_of_200_mb_is_read() -> None:
    limit = 200 * 1024 * 1024
    assert converters.extract("exact.docx", _docx_unpacking_to(limit)).text.startswith("# Warehouse")
    assert _unreadable("bomb.docx", _docx_unpacking_to(limit + 1)) == ("too_large", "bomb.docx unpacks to over 200 MB.")


def test_a_documents_date_is_its_front_matters_first_date_key() -> None:
    body = b"# A\n\nThe quay opens at dawn every day.\n"
    dated = {
        b"---\ndate: 2026-01-02\ndocument_date: 2026-03-04\n---\n": "2026-03-04",  # document_date first
        b"---\nupdated: 2026-05-06T10:00:00\ncreated: 2026-01-01\n---\n": "2026-05-06",  # its day
        b"---\ncreated: 2026-07-08\n---\n": "2026-07-08",
        b"---\ndate: soon\n---\n": None,
        b"---\n- a list\n---\n": None,
        b"---\ndate: [unclosed\n---\n": None,
        b"": None,
    }
    assert {front: converters.extract("a.md", front + body).document_date for front in dated} == dated
