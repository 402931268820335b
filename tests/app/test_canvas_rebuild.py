"""Showing a whole board afresh (``board_changed(None)``: a replay's jump, a state loaded):
the canvas brings what it shows up to the board object by object, keeps the tiles where
nothing changed, and keeps its per-object caches only for what is still shown. Whatever the
jumps, the picture must be pixel for pixel that of a canvas shown the board for the first
time, the scene must hold exactly the board's objects, and the caches nothing else."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from whiteboard.app import scene_index
from whiteboard.app.canvas import MAX_DIRTY_RECTS, BoardCanvas
from whiteboard.app.render import bounds, object_path, text_box
from whiteboard.app.scene_index import Item, Scene, content_bounds
from whiteboard.app.view import Rect, rect_intersects
from whiteboard.board import (
    Board,
    Clear,
    DrawingOp,
    Erase,
    Move,
    Op,
    OpId,
    Shape,
    Stroke,
    Text,
    Undo,
    decode_op,
    encode_op,
    synthetic_op,
    synthetic_stroke,
)

SIZE = (360, 260)


def session_ops(count: int, seed: int, clear_at: int | None = None) -> list[tuple[tuple[int], Op]]:
    """A session's delivered ops with their order keys: mostly drawings, some erases, moves
    and undos of recent ones, ~5% delivered late (ordered before the op before them), and a
    CLEAR at ``clear_at``."""
    rng = random.Random(seed)
    drawn: list[OpId] = []
    ops: list[tuple[tuple[int], Op]] = []
    for i in range(1, count + 1):
        op_id = OpId(1 + i % 3, i)
        roll = rng.random()
        op: Op
        if i == clear_at:
            op = Clear(op_id)
        elif roll < 0.06 and drawn:
            op = Erase(op_id, (rng.choice(drawn[-60:]),))
        elif roll < 0.12 and len(drawn) >= 2:
            op = Move(op_id, tuple(rng.sample(drawn[-60:], 2)), rng.uniform(-80, 80), 40.0)
        elif roll < 0.15 and drawn:
            op = Undo(op_id, rng.choice(drawn[-30:]))
        else:
            op = synthetic_op(op_id.author, op_id.counter, rng)
            drawn.append(op_id)
        late = i > 2 and rng.random() < 0.05
        ops.append(((10 * i - 15,) if late else (10 * i,), op))
    return ops


def board_after(ops: list[tuple[tuple[int], Op]], count: int) -> Board:
    board = Board()
    for key, op in ops[:count]:
        board.apply(key, op)
    return board


def new_canvas(
    qtbot: QtBot, source: Callable[[], Board], send: Callable[[Op], None] | None = None
) -> BoardCanvas:
    """A canvas showing ``source``, drawing as member 42; ``send`` gets what it draws."""
    counter = itertools.count(1)
    canvas = BoardCanvas(source, lambda: OpId(42, next(counter)), send)
    qtbot.addWidget(canvas)
    canvas.resize(*SIZE)
    canvas.show()
    qtbot.waitExposed(canvas)
    return canvas


def picture(canvas: BoardCanvas) -> QImage:
    canvas.finish_rendering()
    return canvas.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)


def fresh_picture(
    qtbot: QtBot, canvas: BoardCanvas, board: Board, lifted: dict[OpId, float] | None = None
) -> QImage:
    """The board as a canvas that never showed anything else paints it, in the same view,
    with the objects ``lifted`` (by a tool, to these opacities)."""
    copy = board.copy()
    fresh = new_canvas(qtbot, lambda: copy)
    fresh.resize(canvas.size())
    fresh.set_view(canvas.view)
    if lifted:
        fresh.set_lifted(lifted)
    image = picture(fresh)
    fresh.close()
    return image


def check_shows(qtbot: QtBot, canvas: BoardCanvas, board: Board) -> None:
    """The canvas shows exactly ``board``: its scene, its caches, its picture."""
    scene = canvas.scene
    objects = board.objects()
    items = scene.items()
    # The same objects (the very op objects), at the same offsets, in the same z-order.
    assert [(i.op, i.dx, i.dy) for i in items] == [(o.op, o.dx, o.dy) for o in objects]
    assert all(i.op is o.op for i, o in zip(items, objects, strict=True))
    assert [i.order for i in items] == [(board.key(o.id), o.id) for o in objects]
    for item in items:
        # Bounds kept across rebuilds are those of the op shown now.
        assert item.base == bounds(item.op)
        assert item.rect == (
            item.base[0] + item.dx,
            item.base[1] + item.dy,
            item.base[2] + item.dx,
            item.base[3] + item.dy,
        )
    check_index(scene)
    # The caches hold only objects shown or kept to be shown again, and what they hold is
    # the op's shown or kept.
    tiles = canvas._tiles
    known = {i.id: i for i in [*scene._retired.values(), *items]}
    assert set(tiles._paths) <= known.keys()
    assert set(tiles._chunks) <= known.keys()
    for op_id, path in tiles._paths.items():
        expected = object_path(known[op_id].op)
        assert (path is None) == (expected is None)
        assert path is None or expected is None or path == expected
    assert picture(canvas) == fresh_picture(qtbot, canvas, board)


def check_reported(
    scene: Scene, before: dict[OpId, Item], gone: list[Item], new: list[Item]
) -> None:
    """What Scene.update reported against what it showed ``before``: an object shown as it
    was keeps its item; the others are new, and what went is reported gone."""
    same = {
        item.id
        for item in scene.items()
        if (old := before.get(item.id)) is not None
        and (old.op, old.dx, old.dy, old.order) == (item.op, item.dx, item.dy, item.order)
    }
    assert all(scene.get(op_id) is before[op_id] for op_id in same)
    assert {i.id for i in new} == {i.id for i in scene.items()} - same
    assert {i.id for i in gone} == set(before) - same


def check_index(scene: Scene) -> None:
    """Every object shown, and every item kept to be shown again, is filed under exactly the
    cells its rectangle meets (or with the big ones), nothing else is filed, and queries of
    any size find what a scan of every shown object finds, in z-order."""
    items = scene.items()
    kept = list(scene._retired.values())
    assert all(i.shown for i in items) and not any(i.shown for i in kept)
    assert not scene._retired.keys() & {i.id for i in items}  # an id is shown or kept
    assert all(i.filed for i in [*items, *kept])
    cell = scene.CELL
    expected: dict[tuple[int, int], set[Item]] = {}
    big: set[Item] = set()
    for item in [*items, *kept]:
        x0, y0, x1, y1 = (math.floor(c / cell) for c in item.rect)
        if (x1 - x0 + 1) * (y1 - y0 + 1) > scene.MAX_CELLS:
            big.add(item)
            continue
        for x in range(x0, x1 + 1):
            for y in range(y0, y1 + 1):
                expected.setdefault((x, y), set()).add(item)
    assert dict(scene._cells) == expected
    assert scene._big == big
    rng = random.Random(len(items))
    for _ in range(12):
        x, y = rng.uniform(-200, 2200), rng.uniform(-200, 1700)
        side = rng.choice((5.0, 60.0, 400.0, 3000.0))
        rect: Rect = (x, y, x + side, y + side * 0.75)
        found = [i.id for i in items if rect_intersects(i.rect, rect)]
        assert [i.id for i in scene.in_rect(rect)] == found
        assert sorted(i.id for i in scene.in_rect(rect, ordered=False)) == sorted(found)


def test_a_canvas_jumping_between_far_apart_boards_shows_each_as_a_fresh_one(
    qtbot: QtBot,
) -> None:
    """One board object changed in place, as a replay does, between moments far apart and
    close together (objects drawn, erased, moved, brought back by undos and by going back):
    after each jump the canvas shows exactly that board, as a canvas that never showed
    another would."""
    ops = session_ops(700, seed=3)
    shown = Board()
    canvas = new_canvas(qtbot, lambda: shown)
    canvas.zoom_by(0.16, QPointF(0.0, 0.0))
    picture(canvas)
    # Far forward, far back, a few steps either way (a handful of objects: repainted where
    # they paint), the end, the start, back to the middle.
    for count in (450, 120, 126, 122, 700, 690, 300, 0, 520, 519, 700):
        target = board_after(ops, count)
        shown.become(target)
        canvas.board_changed(None)
        check_shows(qtbot, canvas, target)


def test_jumps_while_tiles_are_half_rendered_and_after_a_zoom(qtbot: QtBot) -> None:
    """A jump while a block of tiles is being rendered (its list of objects to paint was
    made for the board before) and while the previous zoom's tiles stand in for the new
    ones: nothing of the board before survives."""
    ops = session_ops(500, seed=5)
    shown = board_after(ops, 250)
    canvas = new_canvas(qtbot, lambda: shown)
    canvas.zoom_by(0.2, QPointF(0.0, 0.0))
    picture(canvas)
    tiles = canvas._tiles
    for count, zoom in ((400, 1.0), (150, 1.25), (480, 1.0), (60, 0.8), (500, 1.0)):
        if zoom != 1.0:
            # The previous scale's tiles become the stand-in layer.
            canvas.zoom_by(zoom, QPointF(10.0, 10.0))
        canvas._prepare_view()
        # Start rendering a block over the view and paint one object of it.
        visible = sorted(tiles.visible)
        for key in visible:
            tiles._tiles.pop(key, None)
        block = tiles._start_block(visible[0], set(visible))
        tiles._advance(block, -math.inf)
        assert block.todo is not None and block.done < len(block.todo)
        target = board_after(ops, count)
        shown.become(target)
        canvas.board_changed(None)
        check_shows(qtbot, canvas, target)


def test_a_state_with_new_op_objects_for_the_same_ids_replaces_everything(
    qtbot: QtBot,
) -> None:
    """A board loaded from a state holds new op objects, equal or not to those shown under
    the same ids (one is a different stroke under an id shown before): each is shown from
    its own op, with its own bounds and path; nothing cached for the old ones is used."""
    ops = session_ops(300, seed=7)
    board = board_after(ops, 300)
    holder = [board]
    canvas = new_canvas(qtbot, lambda: holder[0])
    canvas.zoom_by(0.16, QPointF(0.0, 0.0))
    check_shows(qtbot, canvas, board)

    # The same board decoded from the wire: equal ops, all of them new objects.
    decoded = Board()
    for key, op in board.log():
        decoded.apply(key, decode_op(encode_op(op)))
    holder[0] = decoded
    canvas.board_changed(None)
    check_shows(qtbot, canvas, decoded)

    # Another state: a stroke under a shown id is now another stroke elsewhere, and some
    # objects are gone.
    rng = random.Random(8)
    objects = decoded.objects()
    changed_id = objects[len(objects) // 2].id
    other = Board()
    for key, op in decoded.log():
        if op.id == changed_id:
            op = synthetic_stroke(changed_id.author, changed_id.counter, rng)
        elif isinstance(op, Stroke) and rng.random() < 0.3:
            continue
        other.apply(key, op)
    assert other.object(changed_id) is not None
    holder[0] = other
    canvas.board_changed(None)
    check_shows(qtbot, canvas, other)
    assert canvas.scene.get(changed_id).op is other.object(changed_id).op  # type: ignore[union-attr]


def test_a_few_changes_repaint_in_place_and_many_drop_only_the_tiles_they_meet(
    qtbot: QtBot,
) -> None:
    """Few changed objects are repainted where they paint, as a Change is; many drop the
    tiles they meet, and tiles elsewhere are kept as rendered."""
    rng = random.Random(9)
    left = [synthetic_stroke(1, i, rng) for i in range(1, 200)]
    right = [shifted(synthetic_stroke(2, i, rng), 2700.0) for i in range(1, 200)]
    shown = Board()
    for n, op in enumerate(left + right):
        shown.apply((n,), op)
    canvas = new_canvas(qtbot, lambda: shown)
    canvas.resize(1000, 320)
    canvas.zoom_by(0.2, QPointF(0.0, 0.0))
    picture(canvas)
    tiles = canvas._tiles
    repainted: list[int] = []
    repaint = tiles._repaint

    def counting(areas: list[Rect], targets: list) -> None:  # type: ignore[type-arg]
        repainted.append(len(areas))
        repaint(areas, targets)

    tiles._repaint = counting  # type: ignore[method-assign]

    # A few: erased and moved on the left.
    target = shown.copy()
    target.apply((10_000,), Erase(OpId(3, 1), (left[3].id, left[8].id)))
    target.apply((10_001,), Move(OpId(3, 2), (left[5].id,), 30.0, 20.0))
    shown.become(target)
    canvas.board_changed(None)
    assert repainted
    check_shows(qtbot, canvas, target)

    # Many: most strokes on the left erased; the tiles on the right stay as they were
    # (a tile is 1,280 board units wide at this zoom: those from x = 2,560 on).
    right_tiles = {key: tile for key, tile in tiles._tiles.items() if key[0] >= 2}
    assert right_tiles
    erase = Erase(OpId(3, 3), tuple(op.id for op in left[: MAX_DIRTY_RECTS * 8]))
    target = shown.copy()
    target.apply((10_002,), erase)
    repainted.clear()
    shown.become(target)
    canvas.board_changed(None)
    assert not repainted  # dropped, not painted in at once
    assert all(tiles._tiles.get(key) is tile for key, tile in right_tiles.items())
    check_shows(qtbot, canvas, target)


def shifted(op: Stroke, dx: float) -> Stroke:
    points = tuple(c + dx if k % 2 == 0 else c for k, c in enumerate(op.points))
    return Stroke(op.id, points, op.colour, op.width, op.tool)


def test_pending_ops_survive_a_rebuild(qtbot: QtBot) -> None:
    """Ops sent and not delivered yet stay shown through a rebuild: a pending drawing on
    top, a pending erase hiding its target, a pending move moving it; delivered, the
    picture is the board's."""
    ops = session_ops(200, seed=11, clear_at=150)
    sent: list[Op] = []
    shown = board_after(ops, 120)
    canvas = new_canvas(qtbot, lambda: shown, sent.append)
    canvas.zoom_by(0.16, QPointF(0.0, 0.0))
    picture(canvas)
    objects = shown.objects()
    erased, moved = objects[2].id, objects[4].id
    stroke = Stroke(OpId(42, 100), (100.0, 100.0, 900.0, 700.0, 1500.0, 200.0), 0xFF0000FF, 9.0)
    canvas.send(stroke)
    canvas.send(Erase(OpId(42, 101), (erased,)))
    canvas.send(Move(OpId(42, 102), (moved,), 200.0, 100.0))

    for count in (190, 60, 120):  # across the CLEAR and back
        target = board_after(ops, count)
        shown.become(target)
        canvas.board_changed(None)
        scene = canvas.scene
        assert scene.get(stroke.id) is not None
        assert scene.get(stroke.id).order[0][0] == 2**64  # type: ignore[union-attr]
        assert erased not in scene
        board_moved = target.object(moved)
        item = scene.get(moved)
        assert (item is None) == (board_moved is None)
        if item is not None and board_moved is not None:
            assert (item.dx, item.dy) == (board_moved.dx + 200.0, board_moved.dy + 100.0)
        board_ids = {o.id for o in target.objects()} - {erased}
        assert {i.id for i in scene.items()} == board_ids | {stroke.id}

    for n, op in enumerate(sent):
        shown.apply((100_000 + n,), op)
    canvas.board_changed(None)
    assert canvas.pending_ops() == ()
    check_shows(qtbot, canvas, shown)


def test_scene_update_keeps_z_order_its_index_and_the_items_unchanged(qtbot: QtBot) -> None:
    """Scene.update against boards far apart and close: objects shown as they were keep
    their items, the others are reported; every query finds what a scan finds, in z-order.
    Objects added out of order are found in z-order too."""
    del qtbot  # no widget, but text_box measures with a font: the QApplication is needed
    ops = session_ops(600, seed=13, clear_at=450)
    scene = Scene(lambda op: content_bounds(op, text_box), text_box)
    for count in (300, 310, 80, 600, 449, 451, 0, 200):
        board = board_after(ops, count)
        shown = [(o.op, o.dx, o.dy, (board.key(o.id), o.id), None) for o in board.objects()]
        before = {item.id: item for item in scene.items()}
        gone, new = scene.update(shown)
        assert [(i.op, i.dx, i.dy, i.order, i.linear) for i in scene.items()] == shown
        check_reported(scene, before, gone, new)
        assert all(before[i.id] is i for i in gone)
        check_index(scene)
    board = board_after(ops, 400)
    shown = [(o.op, o.dx, o.dy, (board.key(o.id), o.id), None) for o in board.objects()]
    scene = Scene(lambda op: content_bounds(op, text_box), text_box)
    random.Random(14).shuffle(shown)
    for op, dx, dy, order, _ in shown:
        scene.add(op, dx, dy, order)
    everything = scene.in_rect((-1e4, -1e4, 1e4, 1e4))
    assert [i.order for i in everything] == sorted(order for _, _, _, order, _ in shown)
    check_index(scene)


def test_scene_update_from_board_objects_shows_each_as_it_is(qtbot: QtBot) -> None:
    """The board's objects given as they are (the canvas's usual path): the same
    BoardObject keeps its item without a look; an equal one (a board loaded from a state)
    or the same op moved is compared and shown as it now is; both paths mixed (a jump
    with pending moves, then without) leave the scene exactly the board."""
    del qtbot  # text_box measures with a font: the QApplication is needed
    ops = session_ops(500, seed=21, clear_at=350)
    scene = Scene(lambda op: content_bounds(op, text_box), text_box)

    def expected(board: Board) -> list[tuple[Op, float, float, object, object]]:
        return [(o.op, o.dx, o.dy, (board.key(o.id), o.id), None) for o in board.objects()]

    for count, as_objects in ((250, True), (260, False), (260, True), (120, True), (500, True)):
        board = board_after(ops, count)
        before = {item.id: item for item in scene.items()}
        if as_objects:
            gone, new = scene.update((), board.objects(), board.z_order)
        else:
            gone, new = scene.update(expected(board))
        assert [(i.op, i.dx, i.dy, i.order, i.linear) for i in scene.items()] == expected(board)
        check_reported(scene, before, gone, new)
        check_index(scene)
    # The same board again: nothing changes, every item is the one shown before.
    board = board_after(ops, 500)
    scene.update((), board.objects(), board.z_order)
    items = {item.id: item for item in scene.items()}
    assert scene.update((), board.objects(), board.z_order) == ([], [])
    assert all(scene.get(op_id) is item for op_id, item in items.items())
    # Back to an earlier board and forth again (a replay's keyframe copies share objects):
    # the items shown then are shown again, not made anew, and filed where they are.
    earlier = board.copy()
    earlier.apply((10**12, 7, 1), Clear(OpId(7, 10**6)))
    shown_then = {item.id: item for item in scene.items()}
    gone, new = scene.update((), earlier.objects(), earlier.z_order)
    assert scene.items() == [] and len(gone) == len(shown_then)
    gone, new = scene.update((), board.objects(), board.z_order)
    assert gone == [] and len(new) == len(shown_then)
    assert all(scene.get(op_id) is item for op_id, item in shown_then.items())
    check_index(scene)

    # One object moved, on a copy (which shares the other objects): only it is reported.
    target = board.objects()[len(board.objects()) // 2]
    author = target.id.author
    moved = board.copy()
    moved.apply((10**12, author, 1), Move(OpId(author, 10**6), (target.id,), 30.0, -7.0))
    gone, new = scene.update((), moved.objects(), moved.z_order)
    assert [i.id for i in new] == [target.id] and [i.id for i in gone] == [target.id]
    item = scene.get(target.id)
    assert item is not None and (item.dx, item.dy) == (target.dx + 30.0, target.dy - 7.0)
    assert [(i.op, i.dx, i.dy, i.order, i.linear) for i in scene.items()] == expected(moved)
    # Kept items that come back shown otherwise (moved meanwhile) are replaced, and leave
    # the index.
    scene.update((), earlier.objects(), earlier.z_order)
    gone, new = scene.update((), moved.objects(), moved.z_order)
    assert gone == [] and {i.id for i in new} == {o.id for o in moved.objects()}
    assert scene.get(target.id) is item and item.shown
    check_index(scene)
    # A state loaded: equal objects, ops decoded anew: every item replaced, none kept stale.
    loaded = Board.from_snapshot(moved.snapshot())
    gone, new = scene.update((), loaded.objects(), loaded.z_order)
    assert {i.id for i in new} == {i.id for i in gone} == {o.id for o in loaded.objects()}
    assert [(i.op, i.dx, i.dy, i.order, i.linear) for i in scene.items()] == expected(loaded)
    # Objects added and taken away by the live canvas's own path after a jump.
    first, last = loaded.objects()[0], loaded.objects()[-1]
    scene.discard(first.id)
    extra = Stroke(OpId(99, 1), (5.0, 5.0, 900.0, 700.0), 0xFF000000, 3.0)
    scene.add(extra, 0.0, 0.0, ((10**13, 99, 1), extra.id))
    assert scene.topmost_at(5.0, 5.0, 2.0) is scene.get(extra.id)
    assert first.id not in scene and last.id in scene
    check_index(scene)


def test_drawings_kept_ahead_are_shown_by_their_items_when_a_jump_reaches_them(
    qtbot: QtBot,
) -> None:
    """Scene.keep (a replay opening): each drawing is bounded and filed once, ahead; jumps
    then show them by those items (moved ones by new items with the bounds kept), and
    queries never find one not shown."""
    del qtbot  # text_box measures with a font: the QApplication is needed
    ops = session_ops(400, seed=8, clear_at=250)
    bounded: list[OpId] = []

    def counted_bounds(op: DrawingOp) -> Rect:
        bounded.append(op.id)
        return content_bounds(op, text_box)

    scene = Scene(counted_bounds, text_box)
    drawings = {op.id: (op, key) for key, op in ops if isinstance(op, Stroke | Shape | Text)}
    scene.keep((op, 0.0, 0.0, (key, op.id), None) for op, key in drawings.values())
    assert len(scene) == 0 and sorted(bounded) == sorted(drawings)
    check_index(scene)
    assert scene.in_rect((-1e5, -1e5, 1e5, 1e5)) == []
    kept = dict(scene._retired)
    for count in (200, 400, 120, 260):
        board = board_after(ops, count)
        scene.update((), board.objects(), board.z_order)
        for item in scene.items():
            # The first time, each unmoved drawing is shown by its item kept ahead.
            assert item is kept[item.id] or count != 200 or item.dx != 0.0 or item.dy != 0.0
            assert item.base is kept[item.id].base
        check_index(scene)
    assert sorted(bounded) == sorted(drawings)  # none bounded again


def test_items_kept_past_the_limit_leave_the_index(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past RETIRED_ITEMS kept items, they are let go and unfiled (or everything is filed
    afresh when most of the index goes), and a canvas forgets their paths: memory stays
    bounded, queries stay exact."""
    monkeypatch.setattr(scene_index, "RETIRED_ITEMS", 40)
    ops = session_ops(400, seed=5, clear_at=300)
    scene = Scene(lambda op: content_bounds(op, text_box), text_box)
    for count in (100, 20, 250, 0, 299, 301, 120, 400, 60):
        board = board_after(ops, count)
        scene.update((), board.objects(), board.z_order)
        assert len(scene._retired) <= 40
        assert [(i.op, i.dx, i.dy) for i in scene.items()] == [
            (o.op, o.dx, o.dy) for o in board.objects()
        ]
        check_index(scene)
    # A canvas doing the same keeps the paths of what it shows or keeps, no others.
    shown = Board()
    canvas = new_canvas(qtbot, lambda: shown)
    canvas.prepare((op, key) for key, op in ops if isinstance(op, Stroke | Shape | Text))
    canvas.zoom_by(0.2, QPointF(0.0, 0.0))
    for count in (100, 20, 250, 0, 299, 301, 120, 400, 60):
        shown.become(board_after(ops, count))
        canvas.board_changed(None)
        check_shows(qtbot, canvas, shown)


@pytest.mark.parametrize("seed", range(16))
def test_any_mix_of_scene_operations_keeps_the_index_exact(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Jumps with and without the board's objects, single objects shown or taken away (the
    live path), drawings kept ahead, a small or large limit of kept items: after each, the
    index holds exactly what is shown or kept, and queries find exactly what is shown."""
    del qtbot  # text_box measures with a font: the QApplication is needed
    rng = random.Random(seed)
    monkeypatch.setattr(scene_index, "RETIRED_ITEMS", rng.choice([5, 30, 1000]))
    ops = session_ops(300, seed=seed, clear_at=rng.choice([None, 150]))
    drawings = [(key, op) for key, op in ops if isinstance(op, Stroke | Shape | Text)]
    scene = Scene(lambda op: content_bounds(op, text_box), text_box)
    for _ in range(40):
        board = board_after(ops, rng.randrange(0, 301))
        objects = board.objects()
        roll = rng.random()
        if roll < 0.35:
            scene.update((), objects, board.z_order)
        elif roll < 0.5:  # with pending moves: shown as given
            nudge = rng.choice([0.0, 5.0])
            scene.update(
                [(o.op, o.dx + nudge, o.dy, (board.key(o.id), o.id), None) for o in objects]
            )
        elif roll < 0.7:
            for o in rng.sample(objects, min(5, len(objects))):
                scene.put(o.op, o.dx + rng.choice([0.0, 3.0]), o.dy, (board.key(o.id), o.id))
        elif roll < 0.8:
            for o in objects[:3]:
                scene.discard(o.id)
        elif roll < 0.9:
            scene.keep(
                (op, 0.0, 0.0, (key, op.id), None) for key, op in drawings if rng.random() < 0.3
            )
        else:
            scene.take_let_go()
        check_index(scene)


@pytest.mark.parametrize("by_jump", [False, True])
def test_an_id_shown_again_as_another_op_than_the_one_kept_is_painted_from_its_own(
    qtbot: QtBot, by_jump: bool
) -> None:
    """A pending stroke goes out of sight (delivered under a clear, as another op object) and
    is kept with its path; when the delivered op shows (the clear undone), one by one or by
    a jump while a move is pending, it is painted from its own path, not the kept one's."""
    shown = Board()
    canvas = new_canvas(qtbot, lambda: shown, lambda op: None)
    other = Stroke(OpId(9, 1), (300.0, 10.0, 340.0, 20.0), 0xFF000000, 2.0)
    shown.apply((1,), other)
    shown.apply((200,), Clear(OpId(7, 1)))
    canvas.board_changed(None)
    pending = Stroke(OpId(42, 10), (20.0, 20.0, 200.0, 40.0, 300.0, 200.0), 0xFF0000FF, 6.0)
    canvas.send(pending)
    picture(canvas)
    delivered = Stroke(pending.id, (40.0, 200.0, 150.0, 60.0, 330.0, 120.0), 0xFF00AA00, 4.0)
    shown.apply((150,), delivered)  # under the clear: out of sight
    canvas.board_changed(None)
    kept = canvas.scene.kept(pending.id)
    assert kept is not None and kept.op is pending
    change = shown.apply((300,), Undo(OpId(7, 2), OpId(7, 1)))
    if by_jump:
        canvas.send(Move(OpId(42, 99), (other.id,), 5.0, 0.0))  # shown as given
        canvas.board_changed(None)
    else:
        canvas.board_changed(change)
    item = canvas.scene.get(pending.id)
    assert item is not None and item.op is delivered
    assert canvas.scene.kept(pending.id) is None
    picture(canvas)
    assert canvas._tiles._paths.get(pending.id) == object_path(delivered)
    if not by_jump:
        check_shows(qtbot, canvas, shown)


def test_an_op_delivered_as_another_object_than_the_one_pending_is_painted_from_its_own(
    qtbot: QtBot,
) -> None:
    """What is cached for an op id (its path) belongs to the op object shown: a pending
    drawing delivered back as another object (decoded from the network, and here, so that
    it shows, another shape) is painted from the delivered one, by a Change as by a
    rebuild."""
    sent: list[Op] = []
    shown = Board()
    canvas = new_canvas(qtbot, lambda: shown, sent.append)
    for n, board_changed in enumerate((True, False)):
        pending = Stroke(OpId(42, 10 + n), (20.0, 20.0, 200.0, 40.0, 300.0, 200.0), 0xFF0000FF, 6.0)
        canvas.send(pending)
        picture(canvas)  # the pending stroke is painted over the tiles: its path is cached
        assert pending.id in canvas._tiles._paths
        delivered = Stroke(pending.id, (40.0, 200.0, 150.0, 60.0, 330.0, 120.0), 0xFF00AA00, 4.0)
        change = shown.apply((100 + n,), delivered)
        canvas.board_changed(change if board_changed else None)
        assert canvas.pending_ops() == ()
        check_shows(qtbot, canvas, shown)
