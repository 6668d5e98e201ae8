"""PDF to text with pypdf: pure Python, maintained, and it reads the document information.

Pages are apart by a page break (structure.py), from which the chunker counts each chunk's
page numbers. pypdf reads text, not layout: a table comes out as its cells' text in reading
order, not as a Markdown table. An encrypted file (unless it opens with the empty user
password, as many "protected" PDFs do), a damaged file, or a file with no text layer (a scan)
is a ConversionError saying so.
"""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader
from pypdf.errors import DependencyError, PyPdfError

from ragstream.common.formats.errors import ConversionError, Converted
from ragstream.common.formats.structure import PAGE_BREAK
from ragstream.common.formats.text import clean, one_line

# pypdf logs each repair it makes while reading a damaged file; the caller reports the file
# once, as unreadable or not, and these lines would only interleave with that report.
logging.getLogger("pypdf").setLevel(logging.ERROR)
ENCRYPTED = "encrypted PDF: save a copy without a password first"


def pdf_document(data: bytes) -> Converted:
    """The pages' text, the title (when the document names one) and the page count."""
    if b"%PDF-" not in data[:1024]:  # where the format puts the header
        raise ConversionError("not a PDF file (no %PDF- header)")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ConversionError(ENCRYPTED)
        pages = [page.extract_text() or "" for page in reader.pages]
        title = (reader.metadata.title if reader.metadata else None) or ""
    except ConversionError:
        raise
    except DependencyError:  # AES encryption, whose decoder pypdf leaves optional
        raise ConversionError(ENCRYPTED) from None
    except Exception as exc:  # noqa: BLE001 - a damaged file fails anywhere inside the parser
        kind = "damaged PDF" if isinstance(exc, PyPdfError) else "unreadable PDF"
        raise ConversionError(f"{kind}: {one_line(str(exc), 200) or type(exc).__name__}") from None
    # Empty pages keep their break, so the numbers count the file's pages.
    text = PAGE_BREAK.join(clean(page).strip() for page in pages)
    if not text.replace("\f", "").strip():
        raise ConversionError(
            f"PDF of {len(pages)} pages has no text layer (a scan?): run OCR on it first"
        )
    return Converted(text, {"title": one_line(str(title)), "pages": str(len(pages))})
