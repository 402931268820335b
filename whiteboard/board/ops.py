"""Op records: the only things peers tell each other about the board.

Every op is a frozen, slotted dataclass that validates itself on construction, so an ``Op``
value that exists is always within the limits below: the codec, the board and the UI never
re-check. Numbers are normalised on the way in (``int`` -> ``float`` for float fields, plain
``tuple`` -> :class:`OpId`) so that two equal ops are equal field by field and encode to the
same bytes.

The limits are part of the wire contract (docs/board-model.md): changing one changes which
datagrams a peer accepts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar, NamedTuple

# Every float must lie within these bounds. NaN and the infinities fail every such comparison,
# so one chained comparison also enforces "finite".
MAX_COORD = 1e7
# A move may carry an object from one edge of the coordinate range to the other.
MAX_DELTA = 2e7
MAX_WIDTH = 500.0
MAX_FONT_SIZE = 1000.0
MAX_POINTS = 20_000
MAX_TEXT_CHARS = 10_000
MAX_TARGETS = 10_000
MAX_AUTHOR = 2**32 - 1
MAX_COUNTER = 2**63 - 1
MAX_COLOUR = 2**32 - 1
MAX_OPACITY = 255  # an opacity is the alpha byte of a colour
# A transform's linear part (a, b, c, d) is within +-MAX_SCALE, its translation (e, f) within
# +-MAX_SHIFT (scaling about a far point moves far), and it keeps some area: |ad - bc| is at
# least MIN_AREA_SCALE, so that what it flattens can still be found, hit and undone.
MAX_SCALE = 1e4
MAX_SHIFT = 1e12
MIN_AREA_SCALE = 1e-6
# An image's encoded bytes (a BLOB): the app downscales to 2 MiB by default (settable), the
# wire takes up to this, so that the op and its framing fit the transports' 4 MiB messages.
MAX_BLOB_BYTES = 3 << 20
DIGEST_SIZE = 32  # SHA-256, the name a blob is stored and shown under
# The formats an image may be in, by the signature its bytes start with. The pixels are
# decoded by Qt when painted (never trusted); the board only checks the signature.
IMAGE_SIGNATURES = {b"\x89PNG\r\n\x1a\n": "png", b"\xff\xd8\xff": "jpeg"}


class OpKind(IntEnum):
    """The wire constant of each op kind. The values are on the wire: never renumber."""

    STROKE = 1
    LINE = 2
    RECT = 3
    ELLIPSE = 4
    ARROW = 5
    TEXT = 6
    ERASE = 7
    MOVE = 8
    CLEAR = 9
    UNDO = 10
    REDO = 11
    RESTYLE = 12
    REORDER = 13
    EDIT_TEXT = 14
    TRANSFORM = 15
    BLOB = 16
    IMAGE = 17


SHAPE_KINDS = frozenset({OpKind.LINE, OpKind.RECT, OpKind.ELLIPSE, OpKind.ARROW})
DRAWING_KINDS = frozenset({OpKind.STROKE, OpKind.TEXT, OpKind.IMAGE} | SHAPE_KINDS)


class Tool(IntEnum):
    """How a stroke is rendered. On the wire: never renumber."""

    PEN = 1
    HIGHLIGHTER = 2
    MARKER = 3


_TOOL_LOW, _TOOL_HIGH = min(Tool), max(Tool)


class ZPlace(IntEnum):
    """Where a REORDER puts its targets in the z-order. On the wire: never renumber."""

    FRONT = 1  # above every object drawn before the reorder (later drawings stay above)
    BACK = 2  # below every object


_PLACE_LOW, _PLACE_HIGH = min(ZPlace), max(ZPlace)


class OpId(NamedTuple):
    """The unique id of an op: its author's member id and that author's op counter.

    A NamedTuple rather than a dataclass because ids are hashed and compared very often (dict
    keys, sort keys) and tuples do both in C.
    """

    author: int
    counter: int

    def __str__(self) -> str:
        return f"{self.author}:{self.counter}"


class InvalidOpError(ValueError):
    """An op record was built with a field outside its type or limits."""


def _short(value: object) -> str:
    """A bounded ``repr`` for error messages: a 40,000-point list must not end up in a log."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return text


def _got(value: object, wanted: type | tuple[type, ...] = (int, float)) -> str:
    # Name the type when it is the problem, so "got '3'" is not mistaken for the number 3.
    if isinstance(value, bool) or not isinstance(value, wanted):
        return f"got {type(value).__name__} {_short(value)}"
    return f"got {_short(value)}"


def _is_int(value: object) -> bool:
    # bool is an int subclass in Python, but True is never a valid member id, colour or count.
    return isinstance(value, int) and not isinstance(value, bool)


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InvalidOpError(
            f"op field {name!r} must be an int in {low}..{high}, {_got(value, int)}"
        )
    return int(value)


def _check_float(
    name: str, value: object, low: float, high: float, rule: str, *, open_low: bool = False
) -> float:
    """Returns ``value`` as a float if it lies in [low, high] ((low, high] if ``open_low``)."""
    # Compare before converting: float() of a huge int raises OverflowError.
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not low <= value <= high
        or (open_low and value == low)
    ):
        raise InvalidOpError(f"op field {name!r} must be a number {rule}, {_got(value)}")
    return float(value)


def _check_coord(name: str, value: object) -> float:
    return _check_float(name, value, -MAX_COORD, MAX_COORD, "within +-1e7")


def _check_positive(name: str, value: object, high: float) -> float:
    return _check_float(name, value, 0.0, high, f"> 0 and <= {high:g}", open_low=True)


def _check_id(name: str, value: object) -> OpId:
    if not isinstance(value, tuple) or len(value) != 2:
        raise InvalidOpError(
            f"op field {name!r} must be an OpId (author, counter), {_got(value, tuple)}"
        )
    author = _check_int(f"{name}.author", value[0], 1, MAX_AUTHOR)
    counter = _check_int(f"{name}.counter", value[1], 0, MAX_COUNTER)
    if type(value) is OpId and type(value[0]) is int and type(value[1]) is int:
        return value
    return OpId(author, counter)


def _check_targets(name: str, value: object) -> tuple[OpId, ...]:
    if not isinstance(value, tuple | list):
        raise InvalidOpError(
            f"op field {name!r} must be a tuple of 1..{MAX_TARGETS} op ids, {_got(value)}"
        )
    if not 1 <= len(value) <= MAX_TARGETS:
        raise InvalidOpError(
            f"op field {name!r} must hold 1..{MAX_TARGETS} op ids, got {len(value)}"
        )
    targets = tuple(_check_id(f"{name}[{i}]", target) for i, target in enumerate(value))
    # A repeated target would make "move each target once" ambiguous for readers of the log;
    # a sender has no reason to repeat one, so refuse it rather than define it.
    if len(set(targets)) != len(targets):
        raise InvalidOpError(f"op field {name!r} must not repeat an op id")
    return targets


_FLOATS = frozenset({float})


def _check_points(value: object) -> tuple[float, ...]:
    if not isinstance(value, tuple | list):
        raise InvalidOpError(f"op field 'points' must be a flat tuple of numbers, {_got(value)}")
    count = len(value)
    if count % 2 or not 2 <= count <= 2 * MAX_POINTS:
        raise InvalidOpError(
            f"op field 'points' must hold an even number of coordinates, 1..{MAX_POINTS} points"
            f" (x0, y0, x1, y1, ...), got {count} numbers"
        )
    # Fast path for what the codec and the UI produce: a tuple of floats, kept as is (no copy),
    # checked by passes that run in C rather than a Python loop per coordinate (issue 18: it
    # was the largest part of decoding a stroke). A NaN makes the sum NaN (min and max may
    # step over it); without one, min and max bound every coordinate.
    if (
        type(value) is tuple
        and set(map(type, value)) == _FLOATS
        and min(value) >= -MAX_COORD
        and max(value) <= MAX_COORD
        and (total := sum(value)) == total
    ):
        return value
    return tuple(_check_coord(f"points[{i}]", v) for i, v in enumerate(value))


def _check_text(value: object) -> str:
    rule = f"op field 'text' must be a str of 1..{MAX_TEXT_CHARS} characters"
    if not isinstance(value, str):
        raise InvalidOpError(f"{rule}, {_got(value)}")
    if not 1 <= len(value) <= MAX_TEXT_CHARS:
        raise InvalidOpError(f"{rule}, got {len(value)} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot travel as msgpack str; refuse them here, not at send time.
        raise InvalidOpError("op field 'text' must be valid Unicode (no lone surrogates)") from None
    return str(value)


def _set(obj: object, name: str, value: object) -> None:
    # The records are frozen; normalising in __post_init__ is the one sanctioned mutation.
    object.__setattr__(obj, name, value)


@dataclass(frozen=True, slots=True)
class Stroke:
    """A freehand stroke: a polyline through ``points`` (x0, y0, x1, y1, ...)."""

    id: OpId
    points: tuple[float, ...]
    colour: int  # ARGB, 0xAARRGGBB
    width: float
    tool: Tool = Tool.PEN

    kind: ClassVar[OpKind] = OpKind.STROKE

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "points", _check_points(self.points))
        _set(self, "colour", _check_int("colour", self.colour, 0, MAX_COLOUR))
        _set(self, "width", _check_positive("width", self.width, MAX_WIDTH))
        tool = _check_int("tool", self.tool, _TOOL_LOW, _TOOL_HIGH)
        _set(self, "tool", Tool(tool))


_TOOLS = {tool.value: tool for tool in Tool}


def stroke_from_wire(
    author: object, counter: object, points: object, colour: object, width: object, tool: object
) -> Stroke:
    """``Stroke(OpId(author, counter), points, colour, width, tool)`` for values off the wire.

    When they are what the codec writes (ints, a float width, a tuple of floats) and within
    the limits, the stroke is built without the dataclass's ``__init__`` and ``__post_init__``
    setting each field twice (issue 18: a third of a receiver's decoding); otherwise through
    them, for their messages and normalisation. Either way the result is the same stroke."""
    if (
        type(author) is int
        and 1 <= author <= MAX_AUTHOR
        and type(counter) is int
        and 0 <= counter <= MAX_COUNTER
        and type(colour) is int
        and 0 <= colour <= MAX_COLOUR
        and type(width) is float
        and 0.0 < width <= MAX_WIDTH
        and type(tool) is int
        and _TOOL_LOW <= tool <= _TOOL_HIGH
    ):
        stroke: Stroke = object.__new__(Stroke)
        _STROKE_ID(stroke, OpId(author, counter))
        _STROKE_POINTS(stroke, _check_points(points))
        _STROKE_COLOUR(stroke, colour)
        _STROKE_WIDTH(stroke, width)
        _STROKE_TOOL(stroke, _TOOLS[tool])
        return stroke
    op_id: Any = (author, counter)
    unchecked: Any = (points, colour, width, tool)
    return Stroke(op_id, *unchecked)


# The slots' own setters, which a frozen dataclass's __setattr__ does not stand in front of.
_STROKE_ID, _STROKE_POINTS, _STROKE_COLOUR, _STROKE_WIDTH, _STROKE_TOOL = (
    Stroke.__dict__[name].__set__ for name in ("id", "points", "colour", "width", "tool")
)


@dataclass(frozen=True, slots=True)
class Shape:
    """A line, rectangle, ellipse or arrow from (x1, y1) to (x2, y2), the corners of its box."""

    id: OpId
    kind: OpKind
    x1: float
    y1: float
    x2: float
    y2: float
    colour: int  # ARGB outline
    width: float
    fill: int = 0  # ARGB fill, 0 = no fill

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        if not _is_int(self.kind) or self.kind not in SHAPE_KINDS:
            raise InvalidOpError(
                f"op field 'kind' must be one of LINE=2, RECT=3, ELLIPSE=4, ARROW=5 for a shape, "
                f"{_got(self.kind)}"
            )
        _set(self, "kind", OpKind(self.kind))
        for name in ("x1", "y1", "x2", "y2"):
            _set(self, name, _check_coord(name, getattr(self, name)))
        _set(self, "colour", _check_int("colour", self.colour, 0, MAX_COLOUR))
        _set(self, "width", _check_positive("width", self.width, MAX_WIDTH))
        _set(self, "fill", _check_int("fill", self.fill, 0, MAX_COLOUR))


@dataclass(frozen=True, slots=True)
class Text:
    """A text label whose top-left corner is at (x, y)."""

    id: OpId
    x: float
    y: float
    text: str
    colour: int
    font_size: float

    kind: ClassVar[OpKind] = OpKind.TEXT

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "x", _check_coord("x", self.x))
        _set(self, "y", _check_coord("y", self.y))
        _set(self, "text", _check_text(self.text))
        _set(self, "colour", _check_int("colour", self.colour, 0, MAX_COLOUR))
        _set(self, "font_size", _check_positive("font_size", self.font_size, MAX_FONT_SIZE))


@dataclass(frozen=True, slots=True)
class Erase:
    """Removes the target objects that exist at this op's place in the order."""

    id: OpId
    targets: tuple[OpId, ...]

    kind: ClassVar[OpKind] = OpKind.ERASE

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "targets", _check_targets("targets", self.targets))


@dataclass(frozen=True, slots=True)
class Move:
    """Translates the target objects that exist at this op's place in the order by (dx, dy)."""

    id: OpId
    targets: tuple[OpId, ...]
    dx: float
    dy: float

    kind: ClassVar[OpKind] = OpKind.MOVE

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "targets", _check_targets("targets", self.targets))
        _set(self, "dx", _check_float("dx", self.dx, -MAX_DELTA, MAX_DELTA, "within +-2e7"))
        _set(self, "dy", _check_float("dy", self.dy, -MAX_DELTA, MAX_DELTA, "within +-2e7"))


@dataclass(frozen=True, slots=True)
class Clear:
    """Removes every object that exists at this op's place in the order."""

    id: OpId

    kind: ClassVar[OpKind] = OpKind.CLEAR

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))


@dataclass(frozen=True, slots=True)
class Undo:
    """Takes the author's own op ``target`` out of effect (unless a later REDO puts it back)."""

    id: OpId
    target: OpId

    kind: ClassVar[OpKind] = OpKind.UNDO

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "target", _check_id("target", self.target))


@dataclass(frozen=True, slots=True)
class Redo:
    """Puts the author's own op ``target`` back in effect (unless a later UNDO takes it out)."""

    id: OpId
    target: OpId

    kind: ClassVar[OpKind] = OpKind.REDO

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "target", _check_id("target", self.target))


@dataclass(frozen=True, slots=True)
class Restyle:
    """Restyles the target objects that exist at this op's place in the order: each field
    given (not None) replaces that part of their style, where they have it (a stroke has no
    fill; only a text has a font size). ``opacity`` replaces the alpha of the outline and of
    a fill, so that it keeps each object's own colours (docs/board-model.md)."""

    id: OpId
    targets: tuple[OpId, ...]
    colour: int | None = None
    width: float | None = None
    fill: int | None = None
    opacity: int | None = None
    font_size: float | None = None

    kind: ClassVar[OpKind] = OpKind.RESTYLE

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "targets", _check_targets("targets", self.targets))
        if self.colour is not None:
            _set(self, "colour", _check_int("colour", self.colour, 0, MAX_COLOUR))
        if self.width is not None:
            _set(self, "width", _check_positive("width", self.width, MAX_WIDTH))
        if self.fill is not None:
            _set(self, "fill", _check_int("fill", self.fill, 0, MAX_COLOUR))
        if self.opacity is not None:
            _set(self, "opacity", _check_int("opacity", self.opacity, 0, MAX_OPACITY))
        if self.font_size is not None:
            _set(self, "font_size", _check_positive("font_size", self.font_size, MAX_FONT_SIZE))
        fields = (self.colour, self.width, self.fill, self.opacity, self.font_size)
        if fields == (None,) * len(fields):
            raise InvalidOpError("a restyle must set at least one of its style fields")


@dataclass(frozen=True, slots=True)
class Reorder:
    """Puts the target objects that exist at this op's place in the order to the front or
    to the back of the z-order, keeping their order among themselves."""

    id: OpId
    targets: tuple[OpId, ...]
    place: ZPlace

    kind: ClassVar[OpKind] = OpKind.REORDER

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "targets", _check_targets("targets", self.targets))
        _set(self, "place", ZPlace(_check_int("place", self.place, _PLACE_LOW, _PLACE_HIGH)))


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Rewrites the text object ``target``, if it exists at this op's place in the order:
    its words and its font size (both, as the editor left them)."""

    id: OpId
    target: OpId
    text: str
    font_size: float

    kind: ClassVar[OpKind] = OpKind.EDIT_TEXT

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "target", _check_id("target", self.target))
        _set(self, "text", _check_text(self.text))
        _set(self, "font_size", _check_positive("font_size", self.font_size, MAX_FONT_SIZE))

    @property
    def targets(self) -> tuple[OpId]:
        """The one object it edits, as the other edits name theirs."""
        return (self.target,)


Matrix = tuple[float, float, float, float, float, float]


@dataclass(frozen=True, slots=True)
class Transform:
    """Transforms the target objects that exist at this op's place in the order by the
    affine map ``matrix`` = (a, b, c, d, e, f): a point (x, y) of an object, where it is
    shown, goes to (a*x + c*y + e, b*x + d*y + f). A resize or a rotation of a selection is
    one such map about a point of the board, the same for every target."""

    id: OpId
    targets: tuple[OpId, ...]
    matrix: Matrix

    kind: ClassVar[OpKind] = OpKind.TRANSFORM

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        _set(self, "targets", _check_targets("targets", self.targets))
        _set(self, "matrix", _check_matrix(self.matrix))


def image_format(data: bytes) -> str | None:
    """"png" or "jpeg" by the signature ``data`` starts with, None for anything else."""
    for signature, name in IMAGE_SIGNATURES.items():
        if data.startswith(signature):
            return name
    return None


@dataclass(frozen=True, slots=True)
class Blob:
    """The encoded bytes of an image (PNG or JPEG), kept by the board under their SHA-256
    (``digest``, computed here, never taken from the wire) for the IMAGE ops showing them.
    Not an object: nothing draws it, erases, moves or clears it; however often an image is
    pasted, its bytes travel and are stored once (issue 20)."""

    id: OpId
    data: bytes = field(repr=False)
    digest: bytes = field(init=False, repr=False, compare=False)

    kind: ClassVar[OpKind] = OpKind.BLOB

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        data = self.data
        if not isinstance(data, bytes | bytearray | memoryview):
            raise InvalidOpError(f"op field 'data' must be bytes, {_got(data, bytes)}")
        data = bytes(data)
        if not 1 <= len(data) <= MAX_BLOB_BYTES:
            raise InvalidOpError(
                f"op field 'data' must hold 1..{MAX_BLOB_BYTES} bytes, got {len(data)}"
            )
        if image_format(data) is None:
            raise InvalidOpError(
                "op field 'data' must be a PNG or JPEG image (by its signature), got bytes "
                f"starting {data[:8]!r}"
            )
        _set(self, "data", data)
        _set(self, "digest", hashlib.sha256(data).digest())


@dataclass(frozen=True, slots=True)
class Image:
    """The image whose bytes are the BLOB ``digest``, shown in the box from (x, y),
    ``width`` x ``height`` board units, at ``opacity`` (0..255). Until its blob has arrived
    it is shown as an empty frame of that box, and hit, moved and erased like any object."""

    id: OpId
    digest: bytes
    x: float
    y: float
    width: float
    height: float
    opacity: int = MAX_OPACITY

    kind: ClassVar[OpKind] = OpKind.IMAGE

    def __post_init__(self) -> None:
        _set(self, "id", _check_id("id", self.id))
        digest = self.digest
        if not isinstance(digest, bytes | bytearray) or len(digest) != DIGEST_SIZE:
            raise InvalidOpError(
                f"op field 'digest' must be {DIGEST_SIZE} bytes (a SHA-256), "
                f"{_got(digest, bytes)}"
            )
        _set(self, "digest", bytes(digest))
        _set(self, "x", _check_coord("x", self.x))
        _set(self, "y", _check_coord("y", self.y))
        _set(self, "width", _check_positive("width", self.width, 2 * MAX_COORD))
        _set(self, "height", _check_positive("height", self.height, 2 * MAX_COORD))
        _set(self, "opacity", _check_int("opacity", self.opacity, 0, MAX_OPACITY))

    @property
    def colour(self) -> int:
        """As a colour, for what shows or restyles a selection's opacity: black at it."""
        return self.opacity << 24


def _check_matrix(value: object) -> Matrix:
    if not isinstance(value, tuple | list) or len(value) != 6:
        raise InvalidOpError(
            f"op field 'matrix' must be 6 numbers (a, b, c, d, e, f), {_got(value, tuple)}"
        )
    scale, shift = f"within +-{MAX_SCALE:g}", f"within +-{MAX_SHIFT:g}"
    a, b, c, d = (
        _check_float(f"matrix.{name}", v, -MAX_SCALE, MAX_SCALE, scale)
        for name, v in zip("abcd", value[:4], strict=True)
    )
    e, f = (
        _check_float(f"matrix.{name}", v, -MAX_SHIFT, MAX_SHIFT, shift)
        for name, v in zip("ef", value[4:], strict=True)
    )
    if not abs(a * d - b * c) >= MIN_AREA_SCALE:
        raise InvalidOpError(
            f"op field 'matrix' must keep some area (|ad - bc| >= {MIN_AREA_SCALE:g}), "
            f"got {_short(value)}"
        )
    return (a, b, c, d, e, f)


Op = (
    Stroke | Shape | Text | Erase | Move | Clear | Undo | Redo | Restyle | Reorder | TextEdit
    | Transform | Blob | Image
)  # fmt: skip
DrawingOp = Stroke | Shape | Text | Image
# The ops that act on objects named by id (their ``targets``).
TargetedOp = Erase | Move | Restyle | Reorder | TextEdit | Transform
# The ops that change an object without removing it: folded per object, in key order.
EditOp = Move | Restyle | Reorder | TextEdit | Transform
OP_TYPES: tuple[type, ...] = (
    Stroke, Shape, Text, Erase, Move, Clear, Undo, Redo, Restyle, Reorder, TextEdit, Transform,
    Blob, Image,
)  # fmt: skip
DRAWING_TYPES: tuple[type, ...] = (Stroke, Shape, Text, Image)
