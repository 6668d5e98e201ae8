"""The one error a converter raises: its message is the reason the file is not indexed."""


class ConversionError(Exception):
    """The file cannot become a document; the message says why and, where possible, what to
    do about it."""
