"""Real documents the tests build: a PDF by reportlab, a DOCX by python-docx, and a handbook
folder of every format the engine reads (and one file it cannot), for the tests that need files."""

from __future__ import annotations

import io
from pathlib import Path

import docx
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas


def pdf_bytes(lines: list[str]) -> bytes:
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    y = 800
    for line in lines:
        page.drawString(72, y, line)
        y -= 18
    page.showPage()
    page.drawString(72, 800, "The second page says the warehouse closes at six in the evening.")
    page.save()
    return buffer.getvalue()


def docx_bytes() -> bytes:
    document = docx.Document()
    document.add_heading("Quarterly review", level=1)
    document.add_paragraph("The quarterly review found that churn fell by four percent in spring.")
    document.add_heading("Actions", level=2)
    document.add_paragraph("The board approved a second support desk for the northern region.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def handbook(root: Path) -> Path:
    """Seven files under ``root/handbook``: markdown (one a byte-for-byte copy), HTML, a PDF, a
    DOCX, a PDF no reader opens and a plain-text licence."""
    root = root / "handbook"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "boats.md").write_text(
        "---\ndate: 2026-02-01\n---\n# Boats\n\nThe rowing club lends kayaks to members on Saturdays.\n\n"
        "## Safety\n\n- Every paddler must wear a buoyancy aid on the water.\n- Capsize drills happen in July.\n"
    )
    (root / "ferry.html").write_text(
        "<html><head><title>x</title><script>var hidden = 'never a statement here at all';</script></head>"
        "<body><h1>Ferry</h1><p>The harbour ferry leaves pier four at nine every morning.</p></body></html>"
    )
    (root / "warehouse.pdf").write_bytes(pdf_bytes(["Warehouse rules", "Forklifts are parked in bay seven overnight."]))
    (root / "review.docx").write_bytes(docx_bytes())
    (root / "broken.pdf").write_bytes(b"%PDF-1.7 this is not really a pdf")
    (root / "copy-of-boats.md").write_bytes((root / "guides" / "boats.md").read_bytes())
    (root / "LICENSE.APACHE").write_text(
        "Licensed under the Apache License, Version 2.0, for the rowing club's code.\n"
    )
    return root
