"""A lexer and parser for the nGQL the graph store sends, used by the NebulaGraph test double.

The lexer follows graphd's flex scanner (src/parser/scanner.lex) byte by byte for the tokens
it knows, and is stricter where graphd versions disagree: octal escapes (switched off by
--disable_octal_escape_char), \\uXXXX / \\xXXXX escapes (recent versions only), upper-case
\\N \\T \\R \\B \\F (case-insensitive only in recent versions), a raw NUL inside a literal
(graphd copies raw runs with strncpy, which stops at NUL) and exponent floats are errors.
The parser knows only the statement shapes listed in `Parser.sentence`; anything else is a
syntax error, so a statement that is malformed, or altered by a value, fails the test.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


class NgqlSyntaxError(ValueError):
    """The text is not a statement the double understands (graphd: E_SYNTAX_ERROR)."""


@dataclass(frozen=True)
class Token:
    kind: str  # LABEL, STRING, INT, DOUBLE, VAR, PUNCT
    value: object
    at: int


_SIMPLE_ESCAPES = {ord("n"): 0x0A, ord("t"): 0x09, ord("r"): 0x0D, ord("b"): 0x08, ord("f"): 0x0C}
_NUMBER = re.compile(rb"[0-9]+\.[0-9]*|[0-9]*\.[0-9]+|[0-9]+")
_LABEL = re.compile(rb"[a-zA-Z][_a-zA-Z0-9]*")
_PUNCT = (b"->", b"(", b")", b",", b":", b";", b"@", b"|", b".", b"*", b"=", b"-")


def _string(data: bytes, start: int) -> tuple[str, int]:
    """The literal opening at data[start] (a quote): (value, index after the closing quote)."""
    quote, out, i = data[start], bytearray(), start + 1
    while i < len(data):
        byte = data[i]
        if byte == quote:
            try:
                return out.decode("utf-8"), i + 1
            except UnicodeDecodeError as exc:
                raise NgqlSyntaxError(f"string literal at {start} is not UTF-8") from exc
        if byte == 0x0A:
            raise NgqlSyntaxError(f"raw newline inside the string literal at {start}")
        if byte == 0x00:
            raise NgqlSyntaxError(f"raw NUL inside the string literal at {start}")
        if byte != 0x5C:
            out.append(byte)
            i += 1
            continue
        if i + 1 >= len(data):
            break
        nxt = data[i + 1]
        if 0x30 <= nxt <= 0x39:
            raise NgqlSyntaxError(f"octal/decimal escape at {i}: its meaning varies by version")
        if nxt in b"uUxX" and re.fullmatch(rb"[0-9a-fA-F]{4}", data[i + 2 : i + 6]):
            raise NgqlSyntaxError(f"\\u/\\x escape at {i}: only recent versions read it")
        if nxt in b"NTRBF":
            raise NgqlSyntaxError(f"upper-case escape at {i}: its meaning varies by version")
        out.append(_SIMPLE_ESCAPES.get(nxt, nxt))
        i += 2
    raise NgqlSyntaxError(f"unterminated string literal at {start}")


def _skip(data: bytes, i: int) -> int:
    """Index of the next token: skips blanks and comments (#, //, /* */) as graphd does."""
    while i < len(data):
        if data[i] in b" \t\r\n":
            i += 1
        elif data[i : i + 1] == b"#" or data[i : i + 2] == b"//":
            end = data.find(b"\n", i)
            i = len(data) if end < 0 else end
        elif data[i : i + 2] == b"/*":
            end = data.find(b"*/", i + 2)
            if end < 0:
                raise NgqlSyntaxError(f"unterminated comment at {i}")
            i = end + 2
        else:
            break
    return i


def tokenize(text: str) -> list[Token]:
    data, tokens, i = text.encode("utf-8"), [], 0
    while (i := _skip(data, i)) < len(data):
        byte = data[i]
        if byte in b"\"'":
            value, end = _string(data, i)
            tokens.append(Token("STRING", value, i))
        elif data[i : i + 2] in (b"$^", b"$$", b"$-"):
            tokens.append(Token("VAR", chr(data[i + 1]), i))
            end = i + 2
        elif (number := _NUMBER.match(data, i)) and number.group() != b".":
            end = number.end()
            if data[end : end + 1] in (b"e", b"E"):
                raise NgqlSyntaxError(f"exponent in the number at {i}: older lexers reject it")
            literal = number.group().decode()
            if "." in literal:
                tokens.append(Token("DOUBLE", float(literal), i))
            else:
                tokens.append(Token("INT", int(literal), i))
        elif label := _LABEL.match(data, i):
            end = label.end()
            tokens.append(Token("LABEL", label.group().decode(), i))
        elif punct := next((p for p in _PUNCT if data.startswith(p, i)), None):
            end = i + len(punct)
            tokens.append(Token("PUNCT", punct.decode(), i))
        else:
            raise NgqlSyntaxError(f"unexpected character {data[i : i + 1]!r} at {i}")
        i = end
    return tokens


# -- statements -------------------------------------------------------------------------

Vid = str
EdgeRef = tuple[Vid, Vid, int]


@dataclass
class Statement:
    verb: str
    """USE, CREATE SPACE, CREATE TAG, CREATE EDGE, DESCRIBE, INSERT VERTEX, INSERT EDGE,
    DELETE VERTEX, DELETE EDGE, FETCH VERTEX, FETCH EDGE, GO."""
    name: str = ""
    """Space, tag or edge type named by the statement."""
    kind: str = ""
    """DESCRIBE: SPACE, TAG or EDGE."""
    props: list[tuple[str, str]] = field(default_factory=list)
    """CREATE: (name, type); INSERT: (name, "")."""
    vids: list[Vid] = field(default_factory=list)
    edges: list[EdgeRef] = field(default_factory=list)
    rows: list[list[object]] = field(default_factory=list)
    """INSERT: the values of each row (str or float or int)."""
    flag: bool = False
    """CREATE: IF NOT EXISTS; DELETE VERTEX: WITH EDGE; GO: BIDIRECT."""
    vid_length: int = 0
    distinct: bool = False
    yields: list[tuple[str, str]] = field(default_factory=list)
    """(expression, alias); expressions: edge, vertex, id($^), src(edge), dst(edge)."""
    group_yields: list[tuple[str, str]] | None = None
    """GO ... | GROUP BY $-.<group_by> YIELD: ($-.<column> or count(*), alias)."""
    group_by: str = ""


class Parser:
    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.i = 0

    # -- token helpers --------------------------------------------------------------------

    def _peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _fail(self, wanted: str) -> NgqlSyntaxError:
        token = self._peek()
        found = "end of statement" if token is None else f"{token.value!r} at {token.at}"
        return NgqlSyntaxError(f"syntax error: expected {wanted}, found {found}")

    def _is(self, kind: str, value: object = None) -> bool:
        token = self._peek()
        if token is None or token.kind != kind:
            return False
        if value is None:
            return True
        if kind == "LABEL":
            return str(token.value).upper() == value
        return token.value == value

    def _take(self, kind: str, value: object = None) -> object:
        if not self._is(kind, value):
            raise self._fail(f"{kind} {value or ''}".strip())
        self.i += 1
        return self.tokens[self.i - 1].value

    def _accept(self, kind: str, value: object = None) -> bool:
        if self._is(kind, value):
            self.i += 1
            return True
        return False

    def _kw(self, *words: str) -> None:
        for word in words:
            self._take("LABEL", word)

    def _label(self) -> str:
        return str(self._take("LABEL"))

    # -- grammar --------------------------------------------------------------------------

    def sentences(self) -> list[Statement]:
        """`sentence (; sentence)*`, as graphd accepts several in one request."""
        result = [self.sentence()]
        while self._accept("PUNCT", ";"):
            if self._peek() is not None:
                result.append(self.sentence())
        if self._peek() is not None:
            raise self._fail("';' or end of statement")
        return result

    def sentence(self) -> Statement:
        for word, parse in (
            ("USE", self._use),
            ("CREATE", self._create),
            ("DESCRIBE", self._describe),
            ("INSERT", self._insert),
            ("DELETE", self._delete),
            ("FETCH", self._fetch),
            ("GO", self._go),
        ):
            if self._accept("LABEL", word):
                return parse()
        raise self._fail("a statement")

    def _use(self) -> Statement:
        return Statement("USE", name=self._label())

    def _if_not_exists(self) -> bool:
        if self._accept("LABEL", "IF"):
            self._kw("NOT", "EXISTS")
            return True
        return False

    def _create(self) -> Statement:
        if self._accept("LABEL", "SPACE"):
            flag, name = self._if_not_exists(), self._label()
            self._take("PUNCT", "(")
            self._kw("VID_TYPE")
            self._take("PUNCT", "=")
            self._kw("FIXED_STRING")
            self._take("PUNCT", "(")
            length = int(str(self._take("INT")))
            for closing in ")", ")":
                self._take("PUNCT", closing)
            return Statement("CREATE SPACE", name=name, flag=flag, vid_length=length)
        kind = "TAG" if self._accept("LABEL", "TAG") else "EDGE"
        if kind == "EDGE":
            self._kw("EDGE")
        flag, name = self._if_not_exists(), self._label()
        self._take("PUNCT", "(")
        props = self._comma_list(self._column)
        self._take("PUNCT", ")")
        return Statement(f"CREATE {kind}", name=name, flag=flag, props=props)

    def _column(self) -> tuple[str, str]:
        name, kind = self._label(), self._label().lower()
        if kind not in ("string", "double"):
            raise NgqlSyntaxError(f"property type {kind} is not one the double knows")
        self._kw("NOT", "NULL")
        return name, kind

    def _describe(self) -> Statement:
        kind = self._label().upper()
        if kind not in ("SPACE", "TAG", "EDGE"):
            raise NgqlSyntaxError(f"DESCRIBE {kind} is not supported")
        return Statement("DESCRIBE", kind=kind, name=self._label())

    def _vid(self) -> Vid:
        return str(self._take("STRING"))

    def _edge_ref(self) -> EdgeRef:
        src = self._vid()
        self._take("PUNCT", "->")
        dst = self._vid()
        rank = int(str(self._take("INT"))) if self._accept("PUNCT", "@") else 0
        return src, dst, rank

    def _value(self) -> object:
        negative = self._accept("PUNCT", "-")
        if not negative and self._is("STRING"):
            return self._take("STRING")
        if self._is("DOUBLE") or self._is("INT"):
            number = self._take(self.tokens[self.i].kind)
            assert isinstance(number, int | float)
            return -number if negative else number
        raise self._fail("a value")

    def _values(self) -> list[object]:
        self._take("PUNCT", "(")
        values = self._comma_list(self._value)
        self._take("PUNCT", ")")
        return values

    def _comma_list(self, item: Callable[[], T]) -> list[T]:
        items = [item()]
        while self._accept("PUNCT", ","):
            items.append(item())
        return items

    def _insert(self) -> Statement:
        kind = self._label().upper()
        if kind not in ("VERTEX", "EDGE"):
            raise self._fail("VERTEX or EDGE")
        statement = Statement(f"INSERT {kind}", name=self._label())
        self._take("PUNCT", "(")
        statement.props = [(self._label(), "")]
        while self._accept("PUNCT", ","):
            statement.props.append((self._label(), ""))
        self._take("PUNCT", ")")
        self._kw("VALUES")
        while True:
            if kind == "VERTEX":
                statement.vids.append(self._vid())
            else:
                statement.edges.append(self._edge_ref())
            self._take("PUNCT", ":")
            statement.rows.append(self._values())
            if not self._accept("PUNCT", ","):
                return statement

    def _delete(self) -> Statement:
        if self._accept("LABEL", "VERTEX"):
            vids = self._comma_list(self._vid)
            with_edge = self._accept("LABEL", "WITH")
            if with_edge:
                self._kw("EDGE")
            return Statement("DELETE VERTEX", vids=vids, flag=with_edge)
        self._kw("EDGE")
        name = self._label()
        return Statement("DELETE EDGE", name=name, edges=self._comma_list(self._edge_ref))

    def _fetch(self) -> Statement:
        self._kw("PROP", "ON")
        name = self._label()
        is_edge = self.i + 1 < len(self.tokens) and self.tokens[self.i + 1].value == "->"
        statement = Statement("FETCH EDGE" if is_edge else "FETCH VERTEX", name=name)
        while True:
            if is_edge:
                statement.edges.append(self._edge_ref())
            else:
                statement.vids.append(self._vid())
            if not self._accept("PUNCT", ","):
                break
        self._kw("YIELD")
        statement.yields = self._yields(("edge",) if is_edge else ("vertex",))
        return statement

    def _go(self) -> Statement:
        self._kw("FROM")
        statement = Statement("GO", vids=self._comma_list(self._vid))
        self._kw("OVER")
        statement.name = self._label()
        statement.flag = self._accept("LABEL", "BIDIRECT")
        self._kw("YIELD")
        statement.distinct = self._accept("LABEL", "DISTINCT")
        statement.yields = self._yields(("edge", "id($^)", "src(edge)", "dst(edge)"))
        if self._accept("PUNCT", "|"):
            self._kw("GROUP", "BY")
            statement.group_by = self._pipe_column()
            self._kw("YIELD")
            statement.group_yields = self._yields(("$-", "count(*)"))
        return statement

    def _pipe_column(self) -> str:
        self._take("VAR", "-")
        self._take("PUNCT", ".")
        return self._label()

    def _expression(self, allowed: tuple[str, ...]) -> str:
        if "$-" in allowed and self._is("VAR", "-"):
            return f"$-.{self._pipe_column()}"
        name = self._label().lower()
        if self._accept("PUNCT", "("):
            if name == "id":
                self._take("VAR", "^")
                argument = "$^"
            elif name == "count":
                self._take("PUNCT", "*")
                argument = "*"
            else:
                argument = self._label().lower()
            self._take("PUNCT", ")")
            name = f"{name}({argument})"
        if name not in allowed:
            raise NgqlSyntaxError(f"YIELD {name} is not supported here (allowed: {allowed})")
        return name

    def _yields(self, allowed: tuple[str, ...]) -> list[tuple[str, str]]:
        items = []
        while True:
            expression = self._expression(allowed)
            self._kw("AS")
            items.append((expression, self._label()))
            if not self._accept("PUNCT", ","):
                return items


def parse(text: str) -> list[Statement]:
    return Parser(text).sentences()
