"""A small Dockerfile reader: build stages and their instructions, as the builder sees them.

The image's rules that need no build are checked on the parsed file (test_image.py).
Line continuations are joined and comment lines inside a continued instruction are dropped,
as BuildKit does; `ARG` values given before the first FROM are substituted into FROM lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\s+(.*)$", re.DOTALL)
VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, keyword: str) -> list[str]:
        """The arguments of every instruction of this kind, in order."""
        return [args for key, args in self.instructions if key == keyword]


def logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending: list[str] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        lines.append(" ".join(part for part in pending if part))
        pending = []
    if pending:
        lines.append(" ".join(pending))
    return lines


def parse_stages(text: str) -> list[Stage]:
    """The build stages in order; raises ValueError on an instruction before the first FROM."""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical_lines(text):
        match = INSTRUCTION.match(line)
        if not match:
            raise ValueError(f"not an instruction: {line!r}")
        keyword, args = match.group(1).upper(), match.group(2).strip()
        if keyword == "ARG" and not stages:
            name, _, default = args.partition("=")
            global_args[name.strip()] = default.strip().strip("\"'")
        elif keyword == "FROM":
            stages.append(_stage(args, global_args, len(stages)))
        elif not stages:
            raise ValueError(f"{keyword} before the first FROM")
        else:
            stages[-1].instructions.append((keyword, args))
    return stages


def _stage(args: str, global_args: dict[str, str], index: int) -> Stage:
    words = [w for w in args.split() if not w.startswith("--platform")]
    base = VARIABLE.sub(lambda m: global_args.get(m.group(1) or m.group(2), ""), words[0])
    name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(index)
    return Stage(base=base, name=name)
