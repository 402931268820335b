"""Hypothesis strategies and a reference model shared by the board tests.

The reference fold is the specification of docs/board-model.md written as literally as
possible, independent of the incremental implementation in whiteboard.board.model: the tests
hold the real board to it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable

import msgpack
from hypothesis import strategies as st

from whiteboard.board import (
    Blob,
    Board,
    BoardObject,
    Clear,
    Erase,
    Image,
    Move,
    Op,
    OpId,
    OpKind,
    OrderKey,
    Redo,
    Reorder,
    Restyle,
    Shape,
    Stroke,
    Text,
    TextEdit,
    Tool,
    Transform,
    Undo,
    ZPlace,
    encode_op,
)

SHAPE_KINDS = (OpKind.LINE, OpKind.RECT, OpKind.ELLIPSE, OpKind.ARROW)

op_ids = st.builds(OpId, st.integers(1, 2**32 - 1), st.integers(0, 2**63 - 1))
coords = st.floats(-1e7, 1e7, allow_nan=False)
colours = st.integers(0, 2**32 - 1)
widths = st.floats(0.0, 500.0, exclude_min=True)
font_sizes = st.floats(0.0, 1000.0, exclude_min=True)
deltas = st.floats(-2e7, 2e7, allow_nan=False)
target_lists = st.lists(op_ids, min_size=1, max_size=12, unique=True).map(tuple)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Images' bytes: a few distinct ones (a PNG's signature, then anything: the board never
# decodes them), so that scenarios paste the same picture more than once.
blob_bytes = st.sampled_from([PNG_SIGNATURE + bytes([n]) * n for n in (1, 2, 3)])


def _flatten(points: list[tuple[float, float]]) -> tuple[float, ...]:
    return tuple(value for point in points for value in point)


def strokes(ids: st.SearchStrategy[OpId] = op_ids) -> st.SearchStrategy[Stroke]:
    return st.builds(
        Stroke,
        id=ids,
        points=st.lists(st.tuples(coords, coords), min_size=1, max_size=60).map(_flatten),
        colour=colours,
        width=widths,
        tool=st.sampled_from(Tool),
    )


def shapes(ids: st.SearchStrategy[OpId] = op_ids) -> st.SearchStrategy[Shape]:
    return st.builds(
        Shape,
        id=ids,
        kind=st.sampled_from(SHAPE_KINDS),
        x1=coords,
        y1=coords,
        x2=coords,
        y2=coords,
        colour=colours,
        width=widths,
        fill=colours,
    )


def texts(ids: st.SearchStrategy[OpId] = op_ids) -> st.SearchStrategy[Text]:
    return st.builds(
        Text,
        id=ids,
        x=coords,
        y=coords,
        text=st.text(min_size=1, max_size=80),
        colour=colours,
        font_size=font_sizes,
    )


ops_by_kind: dict[str, st.SearchStrategy[Op]] = {
    "stroke": strokes(),
    "shape": shapes(),
    "text": texts(),
    "erase": st.builds(Erase, id=op_ids, targets=target_lists),
    "move": st.builds(Move, id=op_ids, targets=target_lists, dx=deltas, dy=deltas),
    "clear": st.builds(Clear, id=op_ids),
    "undo": st.builds(Undo, id=op_ids, target=op_ids),
    "redo": st.builds(Redo, id=op_ids, target=op_ids),
    "restyle": st.builds(
        Restyle,
        id=op_ids,
        targets=target_lists,
        colour=st.none() | colours,
        width=st.none() | widths,
        fill=st.none() | colours,
        opacity=st.integers(0, 255),  # one field at least
        font_size=st.none() | font_sizes,
    ),
    "transform": st.builds(
        Transform,
        id=op_ids,
        targets=target_lists,
        matrix=st.tuples(*[st.floats(-4.0, 4.0)] * 4, *[st.floats(-1e6, 1e6)] * 2).filter(
            lambda m: abs(m[0] * m[3] - m[1] * m[2]) >= 1e-3
        ),
    ),
    "edit_text": st.builds(
        TextEdit,
        id=op_ids,
        target=op_ids,
        text=st.text(min_size=1, max_size=80),
        font_size=font_sizes,
    ),
    "reorder": st.builds(Reorder, id=op_ids, targets=target_lists, place=st.sampled_from(ZPlace)),
    "blob": st.builds(Blob, id=op_ids, data=st.binary(max_size=64).map(PNG_SIGNATURE.__add__)),
    "image": st.builds(
        Image,
        id=op_ids,
        digest=st.binary(min_size=32, max_size=32),
        x=coords,
        y=coords,
        width=widths,
        height=widths,
        opacity=st.integers(0, 255),
    ),
}
any_op: st.SearchStrategy[Op] = st.one_of(*ops_by_kind.values())

# Small, non-integral moves: float addition is not associative, so summing offsets in a
# different order on different replicas would show up as unequal objects and hashes.
small_deltas = st.floats(-1000.0, 1000.0, allow_nan=False, allow_subnormal=True)


@st.composite
def scenarios(draw: st.DrawFn, max_ops: int = 24) -> list[tuple[OrderKey, Op]]:
    """A session log: drawings by three authors plus ops aimed at earlier ops, with keys.

    Keys are either in creation order (undo after its target, the usual case) or random
    (undos, erases and moves placed before their targets: late inserts of every kind).
    """
    count = draw(st.integers(1, max_ops))
    counters = {1: 0, 2: 0, 3: 0}
    ops: list[Op] = []
    op: Op
    for _ in range(count):
        author = draw(st.sampled_from((1, 2, 3)))
        op_id = OpId(author, counters[author])
        counters[author] += 1
        earlier = [op.id for op in ops]
        # An id nobody ever sends: targets that never arrive must be harmless.
        pool = [*earlier, OpId(9, 999)]
        kind = draw(
            st.sampled_from(
                ("draw",) * 5
                + ("erase", "move", "move", "clear", "undo", "undo", "redo", "redo")
                + ("restyle", "restyle", "front", "back", "edit_text", "edit_text")
                + ("transform", "transform", "blob", "image")
            )
        )
        if kind == "draw" or not earlier:
            # One draw for the geometry: scenario generation dominates the test time, and
            # float variety is exercised by the moves and by the codec tests.
            seed = draw(st.integers(0, 2**20))
            x, y = float(seed % 1000), float(seed // 1000) / 4.0
            if seed % 5 == 1:
                op = Text(op_id, x, y, "words", 0xFF000000 + seed % 7, 12.0)
            elif seed % 3:
                op = Stroke(op_id, (x, y, x + 5.5, y + 1.25), 0xFF000000 + seed % 7, 2.0)
            else:
                kind_of_shape = SHAPE_KINDS[seed % 4]
                op = Shape(op_id, kind_of_shape, x, y, y, x, 0xFF0000FF, 1.0)
        elif kind == "blob":
            op = Blob(op_id, draw(blob_bytes))
        elif kind == "image":
            # Of bytes that may arrive before or after it, or never.
            digest = hashlib.sha256(draw(blob_bytes)).digest()
            x, y = draw(st.sampled_from(((0.5, 1.25), (30.0, -4.5))))
            op = Image(op_id, digest, x, y, 40.0, 20.5, draw(st.sampled_from((255, 128))))
        elif kind in ("erase", "move"):
            targets = tuple(
                draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
            )
            if kind == "erase":
                op = Erase(op_id, targets)
            else:
                op = Move(op_id, targets, draw(small_deltas), draw(small_deltas))
        elif kind == "restyle":
            targets = tuple(
                draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
            )
            # Each field set or not, so that concurrent restyles overlap in some fields only.
            colour, width, fill, opacity, size = draw(
                st.tuples(
                    st.none() | st.sampled_from((0xFF112233, 0x80445566)),
                    st.none() | st.sampled_from((1.5, 7.0)),
                    st.none() | st.sampled_from((0, 0x40AABBCC)),
                    st.none() | st.sampled_from((0, 99, 255)),
                    st.none() | st.sampled_from((9.0, 40.0)),
                ).filter(lambda fields: fields != (None,) * 5)
            )
            op = Restyle(op_id, targets, colour, width, fill, opacity, size)
        elif kind == "transform":
            targets = tuple(
                draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
            )
            # A rotation by a quarter turn, a resize about a point, or a shear: each about a
            # point with non-integral coordinates, so that composing in another order would
            # round differently.
            matrix = draw(
                st.sampled_from(
                    (
                        (0.0, 1.0, -1.0, 0.0, 10.25, -3.5),
                        (1.5, 0.0, 0.0, 0.75, -7.125, 2.5),
                        (1.0, 0.1, 0.3, 1.0, 0.0, 0.0),
                        (0.6, 0.8, -0.8, 0.6, 1.1, 2.2),
                    )
                )
            )
            op = Transform(op_id, targets, matrix)
        elif kind == "edit_text":
            words = draw(st.sampled_from(("one", "two\nlines", "three")))
            size = draw(st.sampled_from((8.0, 30.0)))
            op = TextEdit(op_id, draw(st.sampled_from(pool)), words, size)
        elif kind in ("front", "back"):
            targets = tuple(
                draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
            )
            op = Reorder(op_id, targets, ZPlace.FRONT if kind == "front" else ZPlace.BACK)
        elif kind == "clear":
            op = Clear(op_id)
        else:
            own = [target for target in earlier if target.author == author]
            # Mostly own ops (the ones that can be undone), sometimes another member's.
            choices = own if own and draw(st.integers(0, 3)) else pool
            target = draw(st.sampled_from(choices))
            op = Undo(op_id, target) if kind == "undo" else Redo(op_id, target)
        ops.append(op)
    key_parts = st.tuples(st.integers(0, 40), st.integers(0, 3))
    keys = draw(st.lists(key_parts, min_size=count, max_size=count, unique=True))
    if draw(st.booleans()):
        keys.sort()
    return list(zip(keys, ops, strict=True))


def reference_objects(log: Iterable[tuple[OrderKey, Op]]) -> list[BoardObject]:
    """The visible state by the book: the fold, in key order, of the ops in effect."""
    ordered = sorted(log, key=lambda entry: (entry[0], entry[1].id))
    undone: dict[OpId, bool] = {}
    for _, op in ordered:
        if isinstance(op, Undo | Redo) and op.id.author == op.target.author:
            undone[op.target] = isinstance(op, Undo)  # the last one by key wins
    objects: dict[OpId, list] = {}
    for _, op in ordered:
        if isinstance(op, Undo | Redo) or undone.get(op.id, False):
            continue
        if isinstance(op, Stroke | Shape | Text | Image):
            objects[op.id] = [op, 0.0, 0.0, None]
        elif isinstance(op, Erase):
            for target in op.targets:
                objects.pop(target, None)
        elif isinstance(op, Move):
            for target in op.targets:
                if target in objects:
                    objects[target][1] += op.dx
                    objects[target][2] += op.dy
        elif isinstance(op, Transform):
            for target in op.targets:
                if target in objects:
                    _, dx, dy, linear = objects[target]
                    objects[target][1:] = _composed_by_the_book(op.matrix, linear, dx, dy)
        elif isinstance(op, Restyle):
            for target in op.targets:
                if target in objects:
                    objects[target][0] = _restyled_by_the_book(objects[target][0], op)
        elif isinstance(op, TextEdit):
            if op.target in objects and isinstance(objects[op.target][0], Text):
                text = objects[op.target][0]
                objects[op.target][0] = dataclasses.replace(
                    text, text=op.text, font_size=op.font_size
                )
        elif isinstance(op, Reorder):
            # To the front: above everything there now, in the order they were; to the back:
            # below everything, likewise.
            moved = {t: objects.pop(t) for t in list(objects) if t in op.targets}
            if op.place is ZPlace.FRONT:
                objects.update(moved)
            else:
                objects = moved | objects
        elif isinstance(op, Clear):
            objects.clear()
    return [BoardObject(op, dx, dy, None, linear) for op, dx, dy, linear in objects.values()]


def _composed_by_the_book(matrix: tuple, linear: tuple | None, dx: float, dy: float) -> list:
    """docs/board-model.md's TRANSFORM: the matrix applied after the placement, written out."""
    a, b, c, d, e, f = matrix
    la, lb, lc, ld = linear or (1.0, 0.0, 0.0, 1.0)
    new_linear = (a * la + c * lb, b * la + d * lb, a * lc + c * ld, b * lc + d * ld)
    return [a * dx + c * dy + e, b * dx + d * dy + f, new_linear]


def _restyled_by_the_book(op: Op, restyle: Restyle) -> Op:
    """docs/board-model.md's RESTYLE, field by field."""
    if isinstance(op, Image):  # an image has an opacity and no colours
        return op if restyle.opacity is None else dataclasses.replace(op, opacity=restyle.opacity)
    fields: dict[str, object] = {}
    if restyle.colour is not None:
        fields["colour"] = restyle.colour
    if restyle.width is not None and not isinstance(op, Text):
        fields["width"] = restyle.width
    if restyle.fill is not None and isinstance(op, Shape):
        fields["fill"] = restyle.fill
    if restyle.font_size is not None and isinstance(op, Text):
        fields["font_size"] = restyle.font_size
    if restyle.opacity is not None:
        alpha = restyle.opacity << 24
        colour = fields.get("colour", op.colour)  # type: ignore[union-attr]
        fields["colour"] = alpha | (colour & 0xFFFFFF)  # type: ignore[operator]
        fill = fields.get("fill", getattr(op, "fill", 0))
        if isinstance(op, Shape) and fill:
            fields["fill"] = alpha | (fill & 0xFFFFFF)  # type: ignore[operator]
    return dataclasses.replace(op, **fields)  # type: ignore[type-var]


def shown(objects: Iterable[BoardObject]) -> list[tuple[Op, float, float, object]]:
    """What objects show, in z-order: the reference has no z-orders, only an order."""
    return [(obj.op, obj.dx, obj.dy, obj.linear) for obj in objects]


def reference_blobs(log: Iterable[tuple[OrderKey, Op]]) -> list[bytes]:
    """The digests of the images' bytes a log holds: every BLOB's, undone or not."""
    return sorted({hashlib.sha256(op.data).digest() for _, op in log if isinstance(op, Blob)})


def reference_hash(objects: Iterable[BoardObject], blobs: Iterable[bytes] = ()) -> str:
    """The documented canonical state hash, recomputed independently of Board.hash()."""
    digest = hashlib.sha256(msgpack.packb("whiteboard-board-state/1"))
    for obj in objects:
        placement = [obj.dx, obj.dy] if obj.linear is None else [obj.dx, obj.dy, *obj.linear]
        digest.update(msgpack.packb(placement))
        digest.update(encode_op(obj.op))
    if blobs := list(blobs):
        digest.update(msgpack.packb(sorted(blobs), use_bin_type=True))
    return digest.hexdigest()


def board_of(log: Iterable[tuple[OrderKey, Op]]) -> Board:
    board = Board()
    for key, op in log:
        board.apply(key, op)
    return board
