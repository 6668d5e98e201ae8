"""A table for a person at a terminal, tab-separated lines for a pipe; a value is never cut.

rich shortens a cell that does not fit with an ellipsis, to the terminal's width or, when
stdout is not a terminal, to 80 columns: a doc id cut short cannot be grepped for or passed
on. At a terminal, long values fold onto more lines instead; into a pipe, each row is one
line of tab-separated values, the header first (a tab or line break inside a value becomes
a space).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text


def print_table(console: Console, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    if not console.is_terminal:
        lines = ["\t".join(_one_line(value) for value in row) for row in [columns, *rows]]
        sys.stdout.write("".join(f"{line}\n" for line in lines))
        return
    table = Table()
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(value) for value in row))  # Text: a "[" in an id is no markup
    console.print(table)


def _one_line(value: str) -> str:
    return " ".join(value.replace("\t", " ").splitlines())
