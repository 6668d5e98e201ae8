"""PDF to text with pypdf: pure Python, maintained, and it reads the document information.

Pages are joined by a blank line. An encrypted file (unless it opens with the empty user
password, as many "protected" PDFs do), a damaged file, or a file with no text layer (a scan)
is a ConversionError saying so.
"""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader
from pypdf.errors import DependencyError, PyPdfError

from ragstream.cli.formats.errors import ConversionError
from ragstream.cli.formats.text import clean, one_line

# pypdf logs each repair it makes while reading a damaged file; the caller reports the file
# once, as unreadable or not, and these lines would only interleave with that report.
logging.getLogger("pypdf").setLevel(logging.ERROR)
ENCRYPTED = "encrypted PDF: save a copy without a password first"


def pdf_text(data: bytes) -> tuple[str, str, int]:
    """(text, title, page count); the title is "" when the document names none."""
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
    text = "\n\n".join(clean(page).strip() for page in pages if page.strip())
    if not text:
        raise ConversionError(
            f"PDF of {len(pages)} pages has no text layer (a scan?): run OCR on it first"
        )
    return text, one_line(str(title)), len(pages)
