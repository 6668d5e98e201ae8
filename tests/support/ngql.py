"""A parser for the nGQL the graph store sends, used by the NebulaGraph test double.

Tokens come from `tests.support.ngql_lexer` (graphd's lexing rules, strict where versions
differ). The parser knows only the statement shapes listed in `Parser.sentence` and the pipe
stages in `Parser.pipe`; anything else is a syntax error, so a statement that is malformed,
or altered by a value, fails the test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tests.support.ngql_lexer import NgqlSyntaxError, Token, tokenize

__all__ = ["NgqlSyntaxError", "Parser", "Statement", "Token", "parse", "tokenize"]
T = TypeVar("T")


# -- statements -------------------------------------------------------------------------

Vid = str
EdgeRef = tuple[Vid, Vid, int]


@dataclass
class Statement:
    verb: str
    """USE, CREATE SPACE, CREATE TAG, CREATE EDGE, CREATE INDEX, SHOW INDEXES, REBUILD INDEX,
    DESCRIBE, INSERT VERTEX, INSERT EDGE, DELETE VERTEX, DELETE EDGE, FETCH VERTEX,
    FETCH EDGE, GO, LOOKUP; pipe stages: GO, GROUP BY, YIELD, ORDER BY, LIMIT."""
    name: str = ""
    """Space, tag, edge type or index named by the statement."""
    kind: str = ""
    """DESCRIBE: SPACE, TAG or EDGE; CREATE, SHOW and REBUILD INDEX: TAG or EDGE."""
    props: list[tuple[str, str]] = field(default_factory=list)
    """CREATE: (name, type); CREATE INDEX: (property, length); INSERT: (name, "")."""
    vids: list[Vid] = field(default_factory=list)
    edges: list[EdgeRef] = field(default_factory=list)
    rows: list[list[object]] = field(default_factory=list)
    """INSERT: the values of each row (str or float or int)."""
    flag: bool = False
    """CREATE: IF NOT EXISTS; DELETE VERTEX: WITH EDGE; GO: BIDIRECT."""
    vid_length: int = 0
    distinct: bool = False
    yields: list[tuple[str, str]] = field(default_factory=list)
    """(expression, alias); expressions: edge, vertex, id($^), id(vertex), src(edge),
    dst(edge), properties(vertex).<prop>, $-.<column>, count(*)."""
    schema: str = ""
    """CREATE INDEX: the tag or edge type indexed."""
    source: str = ""
    """GO FROM $-.<source>: the input column holding the start VIDs (empty: `vids`)."""
    targets: list[Vid] | None = None
    """GO ... WHERE dst(edge) IN [...]: only edges to these VIDs."""
    condition: tuple[str, str] = ("", "")
    """LOOKUP ... WHERE <name>.<property> == "<value>": (property, value)."""
    group_by: str = ""
    order_by: list[tuple[str, bool]] = field(default_factory=list)
    """(column, descending)."""
    limit: int = 0
    pipes: list[Statement] = field(default_factory=list)
    """The stages after `|`, in order, each reading the previous stage's rows."""


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
            ("LOOKUP", self._lookup),
            ("SHOW", self._show),
            ("REBUILD", self._rebuild),
        ):
            if self._accept("LABEL", word):
                statement = parse()
                while self._accept("PUNCT", "|"):
                    statement.pipes.append(self.pipe())
                return statement
        raise self._fail("a statement")

    def pipe(self) -> Statement:
        """A stage after `|`: GO FROM $-.<column>, GROUP BY, YIELD, ORDER BY or LIMIT."""
        if self._accept("LABEL", "GO"):
            return self._go()
        if self._accept("LABEL", "GROUP"):
            self._kw("BY")
            group_by = self._pipe_column()
            self._kw("YIELD")
            return Statement("GROUP BY", group_by=group_by, yields=self._yields(("$-", "count(*)")))
        if self._accept("LABEL", "YIELD"):
            return Statement("YIELD", yields=self._yields(("count(*)",)))
        if self._accept("LABEL", "ORDER"):
            self._kw("BY")
            return Statement("ORDER BY", order_by=self._comma_list(self._order))
        if self._accept("LABEL", "LIMIT"):
            return Statement("LIMIT", limit=int(str(self._take("INT"))))
        raise self._fail("a pipe stage")

    def _order(self) -> tuple[str, bool]:
        column = self._pipe_column()
        if self._accept("LABEL", "DESC"):
            return column, True
        self._accept("LABEL", "ASC")
        return column, False

    def _kind(self) -> str:
        kind = self._label().upper()
        if kind not in ("TAG", "EDGE"):
            raise NgqlSyntaxError(f"{kind} is not TAG or EDGE")
        return kind

    def _show(self) -> Statement:
        kind = self._kind()
        self._kw("INDEXES")
        return Statement("SHOW INDEXES", kind=kind)

    def _rebuild(self) -> Statement:
        kind = self._kind()
        self._kw("INDEX")
        return Statement("REBUILD INDEX", kind=kind, name=self._label())

    def _index(self, kind: str) -> Statement:
        flag, name = self._if_not_exists(), self._label()
        self._kw("ON")
        statement = Statement("CREATE INDEX", kind=kind, name=name, flag=flag)
        statement.schema = self._label()
        self._take("PUNCT", "(")
        prop = self._label()
        self._take("PUNCT", "(")
        statement.props = [(prop, str(self._take("INT")))]
        for closing in ")", ")":
            self._take("PUNCT", closing)
        return statement

    def _lookup(self) -> Statement:
        self._kw("ON")
        statement = Statement("LOOKUP", name=self._label())
        self._kw("WHERE")
        if self._label() != statement.name:
            raise NgqlSyntaxError("LOOKUP ... WHERE must name the looked-up schema")
        self._take("PUNCT", ".")
        prop = self._label()
        self._take("PUNCT", "==")
        statement.condition = (prop, str(self._take("STRING")))
        self._kw("YIELD")
        allowed = ("id(vertex)", "properties(vertex)", "src(edge)", "dst(edge)")
        statement.yields = self._yields(allowed)
        return statement

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
        if self._accept("LABEL", "INDEX"):
            return self._index(kind)
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
        statement = Statement("GO")
        if self._is("VAR", "-"):
            statement.source = self._pipe_column()
        else:
            statement.vids = self._comma_list(self._vid)
        self._kw("OVER")
        statement.name = self._label()
        statement.flag = self._accept("LABEL", "BIDIRECT")
        if self._accept("LABEL", "WHERE"):
            for kind, value in (("LABEL", "DST"), ("PUNCT", "("), ("LABEL", "EDGE")):
                self._take(kind, value)
            self._take("PUNCT", ")")
            self._kw("IN")
            self._take("PUNCT", "[")
            statement.targets = self._comma_list(self._vid)
            self._take("PUNCT", "]")
        self._kw("YIELD")
        statement.distinct = self._accept("LABEL", "DISTINCT")
        allowed = ("edge", "id($^)", "src(edge)", "dst(edge)", "$-")
        statement.yields = self._yields(allowed)
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
            if name == "id" and self._accept("VAR", "^"):
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
        if name == "properties(vertex)":
            self._take("PUNCT", ".")
            name = f"{name}.{self._label()}"
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
