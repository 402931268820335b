"""The board: a deterministic function of the delivered ops and their order keys.

Definition (docs/board-model.md has the long form): sort the ops by order key; an op is *in
effect* unless the last valid UNDO/REDO aimed at it is an UNDO; the visible state is the fold,
in key order, of the ops in effect (drawings create objects; ERASE, CLEAR and the edits, MOVE,
RESTYLE, REORDER, EDIT_TEXT and TRANSFORM, act on the objects that exist at their place in
the order).

The implementation never runs that fold. Nothing in the fold brings a removed object back, so
the fold factorises per object: object X (a drawing op) is visible iff

* X is in effect, and
* no CLEAR in effect and no ERASE in effect that targets X comes after X in the order,

and it is X's drawing op edited by the *edits* in effect that target X and come after X
(MOVE, RESTYLE, REORDER, EDIT_TEXT, TRANSFORM), folded in key order: its placement starts as
drawn, each move adding its (dx, dy) and each transform mapping it (whiteboard/board/
geometry.py); its style and words are the drawing's with each restyle and text edit applied
in turn; its place in the z-order is the drawing's sort key, reordered by each reorder in
turn (whiteboard/board/edits.py). The board keeps indexes (ERASEs and edits by target, the
greatest CLEAR in effect, the deciding UNDO/REDO per target) so that any apply, late or not,
recomputes only the objects whose inputs it touched. Appending costs O(size of the op)
(a CLEAR costs the objects it removes); a late insert or an undo costs the objects it affects
times their own history. The sums are done in key order in every code path, so float results
are bit-identical on every replica whatever the arrival order.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import msgpack

from whiteboard.board.codec import (
    UNPACK_LIMITS,
    OpDecodeError,
    encode_op,
    op_from_wire,
    op_to_wire,
)
from whiteboard.board.edits import ZOrder, edited, reordered
from whiteboard.board.geometry import Linear, compose
from whiteboard.board.ops import (
    DRAWING_TYPES,
    OP_TYPES,
    Blob,
    Clear,
    DrawingOp,
    EditOp,
    Erase,
    Image,
    Move,
    Op,
    OpId,
    OpKind,
    Redo,
    Reorder,
    Restyle,
    TargetedOp,
    TextEdit,
    Transform,
    Undo,
)

# A key that totally orders the ops of a session (the transport's OrderKey, same shape).
OrderKey = tuple[int, ...]
# What the board actually sorts by: the order key, then the op id. Keys are unique per op in a
# session; the id only breaks ties should a faulty transport repeat a key, so that even then
# every replica sorts the same way.
SortKey = tuple[OrderKey, OpId]
# Whether a snapshot's op may be taken, given its proof (None if it has none): Board.from_snapshot.
Admit = Callable[[Op, bytes | None], bool]

MAX_KEY_PARTS = 16
MIN_KEY_INT = -(2**63)
MAX_KEY_INT = 2**64 - 1

SNAPSHOT_MAGIC = "whiteboard-board"
SNAPSHOT_VERSION = 1
MAX_SNAPSHOT_BYTES = 256 << 20
MAX_PROOF = 256  # bytes of an op's proof in a snapshot (whiteboard/board/signed.py: 84)

# Prefix of the state hash: names the canonical encoding so a future change of it cannot
# silently compare equal to this one.
HASH_DOMAIN = msgpack.packb("whiteboard-board-state/1")


class SnapshotError(ValueError):
    """Bytes that are not a valid board snapshot. The message says what is wrong."""


class _Encodings:
    """Each visible object's part of the hash, once encoded, with the object it is of (an
    entry serves only that very object: a moved object is a new one). hash() used to encode
    every op anew, and members hash at checkpoints and in every presence: a third of a
    receiver's CPU on a 4,000-stroke run (issue 18). It holds facts about immutable objects,
    not state: copies share it."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[OpId, tuple[BoardObject, bytes]] = {}

    def of(self, obj: BoardObject) -> bytes:
        entry = self.entries.get(obj.op.id)
        if entry is None or entry[0] is not obj:
            placement = (obj.dx, obj.dy) if obj.linear is None else (obj.dx, obj.dy, *obj.linear)
            encoded = msgpack.packb(placement) + encode_op(obj.op)
            entry = self.entries[obj.op.id] = (obj, encoded)
        return entry[1]


@dataclass(frozen=True, slots=True)
class BoardObject:
    """A visible object: the drawing op that created it as restyles and text edits left it
    (same id), placed by ``linear`` (None: as drawn; see whiteboard/board/geometry.py) then
    translated by (dx, dy); ``z``: its place in the z-order if a reorder moved it there,
    None if it sits at its drawing op's sort key (see whiteboard/board/edits.py)."""

    op: DrawingOp
    dx: float = 0.0
    dy: float = 0.0
    z: ZOrder | None = None
    linear: Linear | None = None

    @property
    def id(self) -> OpId:
        return self.op.id

    @property
    def kind(self) -> OpKind:
        return self.op.kind


@dataclass(frozen=True, slots=True)
class Change:
    """What one :meth:`Board.apply` did to the visible state.

    ``added``: objects visible now but not before (new drawings, objects restored by an undo or
    redo, drawings inserted late). ``removed``: visible before, not now. ``changed``: visible
    before and after, but otherwise: moved, transformed, restyled, rewritten or reordered (or
    such an edit undone or redone). Each tuple is in the order of the objects' drawing ops.
    A UI redraws the union of the old and new regions of these objects only.
    """

    op_id: OpId
    late: bool  # inserted before an op already applied
    duplicate: bool  # the op id was already applied: nothing was done
    added: tuple[OpId, ...] = ()
    removed: tuple[OpId, ...] = ()
    changed: tuple[OpId, ...] = ()

    @property
    def affected(self) -> tuple[OpId, ...]:
        return self.added + self.removed + self.changed


def check_order_key(order_key: object) -> OrderKey:
    """``order_key`` as a tuple of ints; raises ValueError unless it is a usable order key."""
    if (
        type(order_key) is tuple
        and 1 <= len(order_key) <= MAX_KEY_PARTS
        and all(type(part) is int and MIN_KEY_INT <= part <= MAX_KEY_INT for part in order_key)
    ):
        return order_key
    if not isinstance(order_key, tuple | list) or not 1 <= len(order_key) <= MAX_KEY_PARTS:
        raise ValueError(
            f"an order key must be a tuple of 1..{MAX_KEY_PARTS} ints, got {_short(order_key)}"
        )
    for part in order_key:
        if not isinstance(part, int) or isinstance(part, bool):
            raise ValueError(f"an order key must hold only ints, got {_short(order_key)}")
        if not MIN_KEY_INT <= part <= MAX_KEY_INT:
            raise ValueError(
                f"an order key's ints must be in -2**63..2**64-1, got {_short(order_key)}"
            )
    return tuple(int(part) for part in order_key)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Entry:
    """One applied op and where it sits in the order."""

    __slots__ = ("key", "op", "sort_key")

    def __init__(self, key: OrderKey, sort_key: SortKey, op: Op) -> None:
        self.key = key
        self.sort_key = sort_key
        self.op = op


_DRAWING_TYPES = frozenset(DRAWING_TYPES)

# Past one late object in this many (see Board._late), they are merged into the others, in
# one sort if need be.
MERGE_SHARE = 32

# The state of every object touched by one apply, as it was before it: None = not visible.
_Before = dict[OpId, BoardObject | None]


class Board:
    """The replicated board. Not thread-safe: one owner applies ops and reads the state."""

    def __init__(self) -> None:
        self._entries: dict[OpId, _Entry] = {}
        self._last: SortKey | None = None
        # Per target: the sort key of the UNDO/REDO that decides it (the greatest valid one so
        # far) and whether it is an UNDO. Kept for targets not (yet) applied too: an undo may
        # arrive before its target.
        self._toggles: dict[OpId, tuple[SortKey, bool]] = {}
        # Per target: the ERASE ops and the edits naming it, in arrival order, in effect or
        # not.
        self._erasers: dict[OpId, list[OpId]] = {}
        self._editors: dict[OpId, list[EditOp]] = {}
        # Whether an object was ever reordered: until then z-orders are sort keys, found
        # without looking the object up.
        self._reordered = False
        self._clears: list[OpId] = []
        # The images' bytes by SHA-256 (BLOB ops): a set that only grows, whatever the order.
        self._blobs: dict[bytes, bytes] = {}
        # The greatest sort key of the CLEARs in effect: everything created before it is gone.
        self._cleared_below: SortKey | None = None
        # The visible objects: in z-order, but for those added below the top one (a late
        # drawing, a restored object) since the two were last merged, which are in _late.
        # objects() puts these in their place in the list it returns without rebuilding the
        # dict: on a replay's board of 90,000 objects, rebuilding it hashes every id anew
        # (~30 ms) where ~100 are late.
        self._objects: dict[OpId, BoardObject] = {}
        self._late: dict[OpId, BoardObject] = {}
        self._z_top: ZOrder | None = None
        self._hash: str | None = None
        self._encodings = _Encodings()  # shared with copies: facts about immutable objects

    # -- copying ----------------------------------------------------------------------------

    def copy(self) -> Board:
        """A board equal to this one that changes independently of it, in O(its size) with
        nothing recomputed (replay keeps such copies as keyframes: ~0.3 us an op, against
        ~9 us an op to apply them again)."""
        self._merge_late()  # once here rather than in every copy
        board = Board.__new__(Board)
        board.become(self)
        return board

    def become(self, source: Board) -> None:
        """Take ``source``'s state, in place (a widget showing this board keeps showing it);
        ``source`` is left as it was. Entries, objects, ops and keys are immutable once made,
        so they are shared; only the containers holding them, which apply() changes, are new
        (the lists of erasers and editors too, as they are appended to)."""
        self._entries = source._entries.copy()
        self._last = source._last
        self._toggles = source._toggles.copy()
        self._erasers = {target: list(ops) for target, ops in source._erasers.items()}
        self._editors = {target: list(ops) for target, ops in source._editors.items()}
        self._reordered = source._reordered
        self._clears = list(source._clears)
        self._blobs = source._blobs.copy()
        self._cleared_below = source._cleared_below
        self._objects = source._objects.copy()
        self._late = source._late.copy()
        self._z_top = source._z_top
        self._hash = source._hash
        self._encodings = source._encodings

    # -- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, op_id: object) -> bool:
        return op_id in self._entries

    def __repr__(self) -> str:
        return f"<Board ops={len(self._entries)} objects={len(self._objects) + len(self._late)}>"

    def op(self, op_id: OpId) -> Op:
        """The applied op with id ``op_id``; KeyError if it was not applied."""
        return self._entries[op_id].op

    def key(self, op_id: OpId) -> OrderKey:
        """The order key ``op_id`` was applied at; KeyError if it was not applied."""
        return self._entries[op_id].key

    @property
    def last_key(self) -> OrderKey | None:
        """The greatest order key applied, None for an empty board."""
        return None if self._last is None else self._last[0]

    def in_effect(self, op_id: OpId) -> bool:
        """False if the last valid UNDO/REDO on ``op_id`` so far is an UNDO.

        Meaningless for UNDO/REDO ops themselves, which cannot be undone.
        """
        toggle = self._toggles.get(op_id)
        return toggle is None or not toggle[1]

    def log(self) -> list[tuple[OrderKey, Op]]:
        """Every applied op with its order key, in order."""
        entries = sorted(self._entries.values(), key=_sort_key_of)
        return [(entry.key, entry.op) for entry in entries]

    def object(self, op_id: OpId) -> BoardObject | None:
        """The visible object created by ``op_id``, None if it is not visible."""
        obj = self._objects.get(op_id)
        return self._late.get(op_id) if obj is None else obj

    def objects(self) -> list[BoardObject]:
        """The visible objects in z-order (bottom first): the order of their drawing ops, but
        for those a reorder moved."""
        return self._ordered()

    def z_order(self, op_id: OpId) -> ZOrder:
        """Where the object ``op_id`` sits in the z-order (see whiteboard/board/edits.py):
        its sort key unless it is visible and was reordered. KeyError if not applied."""
        if self._reordered:
            obj = self.object(op_id)
            if obj is not None and obj.z is not None:
                return obj.z
        return self._entries[op_id].sort_key

    def blob(self, digest: bytes) -> bytes | None:
        """The bytes of the image stored under SHA-256 ``digest``, None until they arrive."""
        return self._blobs.get(digest)

    @property
    def blob_digests(self) -> list[bytes]:
        """The digests of every image's bytes held, sorted."""
        return sorted(self._blobs)

    def hash(self) -> str:
        """Hex SHA-256 of the visible state; equal states give equal hashes on every replica.

        The canonical encoding: the msgpack str "whiteboard-board-state/1", then for each
        visible object in z-order the msgpack array [dx, dy] (float64), or [dx, dy, a, b, c,
        d] for one transformed, followed by the wire encoding of its drawing op as restyles
        and text edits left it (the z-order is the objects' order); then, if the board holds
        any image bytes, the msgpack array of their SHA-256 digests (bin), sorted.
        """
        if self._hash is None:
            digest = hashlib.sha256(HASH_DOMAIN)
            ordered = self._ordered()
            if len(self._encodings.entries) > 2 * len(ordered) + 1024:
                self._encodings = _Encodings()  # mostly erased ops' entries: let them go
            digest.update(b"".join(map(self._encodings.of, ordered)))
            if self._blobs:
                digest.update(msgpack.packb(sorted(self._blobs), use_bin_type=True))
            self._hash = digest.hexdigest()
        return self._hash

    def _ordered(self) -> list[BoardObject]:
        """The visible objects in z-order: _objects with the late ones put in their place."""
        if len(self._late) * MERGE_SHARE > len(self._objects):
            self._merge_late()
        late, objects = self._late, self._objects
        ordered = list(objects.values())
        for place, op_id in self._late_places(list(objects)):
            ordered.insert(place, late[op_id])
        return ordered

    def _merge_late(self) -> None:
        """Put the late objects in their place in _objects."""
        late = self._late
        if not late:
            return
        objects = self._objects
        if len(late) * MERGE_SHARE > len(objects):
            # Many: one sort. Of the ids, not (id, object) pairs: on a board of 100,000
            # objects the pairs are as many short-lived tuples, which cost time and set off
            # the garbage collector.
            ids = sorted([*objects, *late], key=self._z_key())
        else:
            ids = list(objects)
            for place, op_id in self._late_places(ids):
                ids.insert(place, op_id)
        merged = objects | late
        self._objects = {op_id: merged[op_id] for op_id in ids}
        self._late = {}

    def _late_places(self, ids: list[OpId]) -> list[tuple[int, OpId]]:
        """Where each late object goes among ``ids`` (in z-order), found by bisection, the
        greatest first: inserted in that order, each leaves the places of the others as
        found."""
        z_key = self._z_key()
        if not self._reordered:
            # Z-orders are sort keys, which end with the op id: no pairs to build.
            keys = sorted(map(z_key, self._late), reverse=True)
            return [(bisect_left(ids, key, key=z_key), key[1]) for key in keys]
        return [
            (bisect_left(ids, z, key=z_key), op_id)
            for z, op_id in sorted(((z_key(i), i) for i in self._late), reverse=True)
        ]

    def _z_key(self) -> Callable[[OpId], ZOrder]:
        """The z-order of a visible object by id: its sort key until anything is reordered
        (a lookup fewer for every one of them)."""
        return self.z_order if self._reordered else self._sort_key

    def _sort_key(self, op_id: OpId) -> SortKey:
        return self._entries[op_id].sort_key

    # -- applying ---------------------------------------------------------------------------

    def apply(self, order_key: OrderKey, op: Op) -> Change:
        """Inserts ``op`` at ``order_key`` and reports what changed on screen.

        An op id already applied is ignored, whatever its key (``duplicate=True``). Raises
        ValueError for an unusable order key and TypeError for something that is not an op.
        """
        key = check_order_key(order_key)
        if not isinstance(op, OP_TYPES):
            raise TypeError(f"not an op: {type(op).__name__}")
        op_id = op.id
        if op_id in self._entries:
            return Change(op_id, late=False, duplicate=True)
        sort_key: SortKey = (key, op_id)
        late = self._last is not None and sort_key < self._last
        if not late:
            self._last = sort_key
        self._entries[op_id] = _Entry(key, sort_key, op)
        if not late and type(op) in _DRAWING_TYPES and op_id not in self._toggles:
            # The usual case, a new drawing above all the others that no undo or redo came
            # for before it (issue 18: most of a receiver's board work went to the general
            # path). It is what _refresh would find: in effect; above every clear, erase and
            # move applied so far (their keys are below ours, so none acts on it); and the
            # new top of the z-order.
            self._objects[op_id] = BoardObject(op)  # type: ignore[arg-type]
            self._z_top = sort_key
            self._hash = None
            return Change(op_id, False, False, (op_id,))

        before: _Before = {}
        if isinstance(op, DrawingOp):
            self._refresh(op_id, before)
        elif isinstance(op, Erase):
            self._apply_erase(op, sort_key, before)
        elif isinstance(op, EditOp):
            self._apply_edit(op, sort_key, late, before)
        elif isinstance(op, Clear):
            self._clears.append(op_id)
            if self.in_effect(op_id):
                self._raise_clear(sort_key, before)
        elif isinstance(op, Undo | Redo):
            self._apply_toggle(op, sort_key, before)
        elif isinstance(op, Blob):
            return self._apply_blob(op, late)
        return self._change(op_id, late, before)

    def _apply_blob(self, op: Blob, late: bool) -> Change:
        # Not an object: its bytes are kept (once, however many BLOBs carry them, and even if
        # undone: an UNDO of a BLOB has no effect) and the images showing them change from a
        # frame to the picture.
        if op.digest in self._blobs:
            return Change(op.id, late, False)
        self._blobs[op.digest] = op.data
        self._hash = None
        shown = [
            obj.id
            for obj in (*self._objects.values(), *self._late.values())
            if isinstance(obj.op, Image) and obj.op.digest == op.digest
        ]
        entries = self._entries
        return Change(
            op.id, late, False, changed=tuple(sorted(shown, key=lambda i: entries[i].sort_key))
        )

    def _apply_erase(self, op: Erase, sort_key: SortKey, before: _Before) -> None:
        op_id = op.id
        for target in op.targets:
            self._erasers.setdefault(target, []).append(op_id)
        if not self.in_effect(op_id):
            return
        entries = self._entries
        for target in op.targets:
            # A visible target created before the erase is gone; an invisible one stays so.
            if self.object(target) is not None and entries[target].sort_key < sort_key:
                self._set(target, None, before)

    def _apply_edit(self, op: EditOp, sort_key: SortKey, late: bool, before: _Before) -> None:
        for target in op.targets:
            self._editors.setdefault(target, []).append(op)
        if not self.in_effect(op.id):
            return
        if isinstance(op, Reorder):
            self._reordered = True
        entries = self._entries
        for target in op.targets:
            obj = self.object(target)
            if obj is None or entries[target].sort_key > sort_key:
                continue
            if late:
                # Re-fold in key order: float addition must happen in the same order
                # everywhere, and a later restyle or reorder applies over an earlier one.
                self._refresh(target, before)
            else:
                # The greatest key so far: this edit is the last step of the fold anyway.
                self._set(target, _edited(obj, op, sort_key, entries[target].sort_key), before)

    def _apply_toggle(self, op: Undo | Redo, sort_key: SortKey, before: _Before) -> None:
        target = op.target
        if op.id.author != target.author:
            return  # a member may only undo/redo its own ops: recorded, no effect
        current = self._toggles.get(target)
        if current is not None and current[0] > sort_key:
            return  # a later UNDO/REDO on the same target decides
        was_in_effect = current is None or not current[1]
        undo = isinstance(op, Undo)
        self._toggles[target] = (sort_key, undo)
        entry = self._entries.get(target)
        if entry is None or was_in_effect != undo:
            return  # the target is not here yet, or stays as it was
        target_op = entry.op
        if isinstance(target_op, DrawingOp):
            self._refresh(target, before)
        elif isinstance(target_op, TargetedOp):
            if isinstance(target_op, Reorder):
                self._reordered = True
            for erased_or_edited in target_op.targets:
                self._refresh(erased_or_edited, before)
        elif isinstance(target_op, Clear):
            self._rescan_clears(before)
        # An UNDO/REDO aimed at an UNDO/REDO has no effect.

    def _raise_clear(self, sort_key: SortKey, before: _Before) -> None:
        """A CLEAR at ``sort_key`` came into effect."""
        if self._cleared_below is not None and sort_key < self._cleared_below:
            return  # a later clear already removed everything this one would
        self._cleared_below = sort_key
        entries = self._entries
        for target in [t for t in (*self._objects, *self._late) if entries[t].sort_key < sort_key]:
            self._set(target, None, before)

    def _rescan_clears(self, before: _Before) -> None:
        """A CLEAR came into or went out of effect through an UNDO/REDO."""
        entries = self._entries
        old = self._cleared_below
        new = max((entries[c].sort_key for c in self._clears if self.in_effect(c)), default=None)
        if new == old:
            return
        if old is None or (new is not None and new > old):
            assert new is not None  # new != old, and old is None or smaller
            self._raise_clear(new, before)
            return
        # The bar went down: drawings between the new bar and the old one may come back.
        self._cleared_below = new
        for op_id, entry in entries.items():
            if (
                isinstance(entry.op, DrawingOp)
                and entry.sort_key < old
                and (new is None or entry.sort_key > new)
            ):
                self._refresh(op_id, before)

    def _compute(self, op_id: OpId) -> BoardObject | None:
        """The object ``op_id`` per the per-object characterisation in the module docstring."""
        entry = self._entries.get(op_id)
        if entry is None:
            return None
        op = entry.op
        if not isinstance(op, DrawingOp) or not self.in_effect(op_id):
            return None
        sort_key = entry.sort_key
        if self._cleared_below is not None and sort_key < self._cleared_below:
            return None
        entries = self._entries
        for eraser in self._erasers.get(op_id, ()):
            if entries[eraser].sort_key > sort_key and self.in_effect(eraser):
                return None
        obj = BoardObject(op)
        editors = self._editors.get(op_id)
        if editors:
            edits = sorted(
                (
                    (entries[edit.id].sort_key, edit)
                    for edit in editors
                    if entries[edit.id].sort_key > sort_key and self.in_effect(edit.id)
                ),
                key=itemgetter(0),
            )
            for edit_key, edit in edits:
                obj = _edited(obj, edit, edit_key, sort_key)
        current = self.object(op_id)
        if current is not None and current == obj:
            return current
        return obj

    def _refresh(self, op_id: OpId, before: _Before) -> None:
        self._set(op_id, self._compute(op_id), before)

    def _set(self, op_id: OpId, obj: BoardObject | None, before: _Before) -> None:
        objects = self._objects
        current = objects.get(op_id)
        if current is None and op_id in self._late:
            objects = self._late
            current = objects[op_id]
        if obj is current:
            return
        if op_id not in before:
            before[op_id] = current
        if obj is None:
            del objects[op_id]
            return
        if current is not None:
            if current.z == obj.z:
                # Replacing the value of a present key keeps its place in the dict, hence in
                # z-order.
                objects[op_id] = obj
                return
            del objects[op_id]  # reordered: it goes where its new z-order puts it
        z = self._entries[op_id].sort_key if obj.z is None else obj.z
        if self._z_top is None or z > self._z_top:
            self._z_top = z
            self._objects[op_id] = obj
        else:
            self._late[op_id] = obj

    def _change(self, op_id: OpId, late: bool, before: _Before) -> Change:
        if not before:
            return Change(op_id, late=late, duplicate=False)
        added: list[OpId] = []
        removed: list[OpId] = []
        changed: list[OpId] = []
        for target, old in before.items():
            new = self.object(target)
            if old is None:
                if new is not None:
                    added.append(target)
            elif new is None:
                removed.append(target)
            elif new is not old and new != old:
                changed.append(target)
        if added or removed or changed:
            self._hash = None
        entries = self._entries

        def z_order(ids: list[OpId]) -> tuple[OpId, ...]:
            return tuple(sorted(ids, key=lambda i: entries[i].sort_key))

        return Change(op_id, late, False, z_order(added), z_order(removed), z_order(changed))

    # -- snapshots --------------------------------------------------------------------------

    def snapshot(self, proofs: Mapping[OpId, bytes] | None = None) -> bytes:
        """The whole ordered op log: ``[magic, version, [[order_key, op_wire], ...]]``; an
        op with a proof in ``proofs`` (a private session's, whiteboard/board/signed.py) has it
        as a third item, so that whoever is given the board can check every op."""
        proofs = proofs or {}
        log = [
            [entry.key, op_to_wire(entry.op), *_proof_of(proofs, entry.op.id)]
            for entry in sorted(self._entries.values(), key=_sort_key_of)
        ]
        data: bytes = msgpack.packb([SNAPSHOT_MAGIC, SNAPSHOT_VERSION, log], use_bin_type=True)
        return data

    @classmethod
    def from_snapshot(cls, data: bytes, admit: Admit | None = None) -> Board:
        """The board a snapshot describes. Raises :class:`SnapshotError`, and nothing else.

        ``admit(op, proof)`` (proof None when the entry has none) is asked for each op; the ops
        it refuses are left out, as a private session's replica leaves out unproven ones."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise SnapshotError(f"a snapshot must be bytes, got {type(data).__name__}")
        if not data:
            raise SnapshotError("the snapshot is empty")
        if len(data) > MAX_SNAPSHOT_BYTES:
            raise SnapshotError(
                f"the snapshot is {len(data)} bytes, more than the limit of {MAX_SNAPSHOT_BYTES}"
            )
        limits = dict(UNPACK_LIMITS)
        # The log itself may be longer than any array inside an op.
        limits["max_array_len"] = len(data)
        # The bins: ops' proofs and images' bytes (BLOB) and digests (IMAGE).
        limits["max_bin_len"] = max(MAX_PROOF, UNPACK_LIMITS["max_bin_len"])
        try:
            item = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=False, **limits)
        # msgpack signals bad input with many exception types; all mean "not a snapshot".
        except Exception as error:
            raise SnapshotError(f"the snapshot is not valid msgpack: {error}") from None
        try:
            return cls._from_item(item, admit)
        except SnapshotError:
            raise
        # _from_item is meant to raise only SnapshotError; a snapshot comes from another host,
        # so should anything else slip through it still must not take the joiner down.
        except Exception as error:
            raise SnapshotError(f"malformed snapshot ({type(error).__name__}: {error})") from None

    @classmethod
    def _from_item(cls, item: Any, admit: Admit | None) -> Board:
        shape = f"[{SNAPSHOT_MAGIC!r}, version, [[order_key, op, proof?], ...]]"
        if not isinstance(item, tuple) or len(item) != 3 or item[0] != SNAPSHOT_MAGIC:
            raise SnapshotError(f"not a board snapshot: expected a msgpack array {shape}")
        version = item[1]
        if type(version) is not int:
            raise SnapshotError(f"the snapshot version must be an int, got {_short(version)}")
        if version != SNAPSHOT_VERSION:
            raise SnapshotError(
                f"unsupported snapshot version {version} (this build reads {SNAPSHOT_VERSION})"
            )
        log = item[2]
        if not isinstance(log, tuple):
            raise SnapshotError(f"the snapshot log must be an array, got {_short(log)}")
        board = cls()
        previous: SortKey | None = None
        for index, entry in enumerate(log):
            if not isinstance(entry, tuple) or len(entry) not in (2, 3):
                raise SnapshotError(
                    f"snapshot entry {index} must be an array [order_key, op, proof?], "
                    f"got {_short(entry)}"
                )
            proof = entry[2] if len(entry) == 3 else None
            if proof is not None and not isinstance(proof, bytes):
                raise SnapshotError(f"snapshot entry {index}: a proof must be bytes")
            if proof is not None and len(proof) > MAX_PROOF:
                raise SnapshotError(
                    f"snapshot entry {index}: a proof of {len(proof)} bytes, more than "
                    f"{MAX_PROOF}"
                )
            try:
                key = check_order_key(entry[0])
                op = op_from_wire(entry[1])
            except (ValueError, OpDecodeError) as error:
                raise SnapshotError(f"snapshot entry {index}: {error}") from None
            sort_key = (key, op.id)
            if op.id in board:
                raise SnapshotError(f"snapshot entry {index} repeats op id {op.id}")
            if previous is not None and sort_key <= previous:
                raise SnapshotError(
                    f"snapshot entry {index} is out of order: key {key} after {previous[0]}"
                )
            previous = sort_key
            if admit is None or admit(op, proof):
                board.apply(key, op)
        return board


def _edited(obj: BoardObject, edit: EditOp, edit_key: SortKey, own_key: SortKey) -> BoardObject:
    """``obj`` (the object of the drawing at ``own_key``) after ``edit``, at ``edit_key``:
    one step of the per-object fold (module docstring)."""
    if isinstance(edit, Move):
        return BoardObject(obj.op, obj.dx + edit.dx, obj.dy + edit.dy, obj.z, obj.linear)
    if isinstance(edit, Restyle | TextEdit):
        op = edited(obj.op, edit)
        return obj if op is obj.op else BoardObject(op, obj.dx, obj.dy, obj.z, obj.linear)
    if isinstance(edit, Transform):
        linear, dx, dy = compose(edit.matrix, obj.linear, obj.dx, obj.dy)
        return BoardObject(obj.op, dx, dy, obj.z, linear)
    previous = own_key if obj.z is None else obj.z
    z = reordered(edit.place, edit_key, previous)
    return BoardObject(obj.op, obj.dx, obj.dy, z, obj.linear)


def _proof_of(proofs: Mapping[OpId, bytes], op_id: OpId) -> list[bytes]:
    proof = proofs.get(op_id)
    return [] if proof is None else [proof]


def _sort_key_of(entry: _Entry) -> SortKey:
    return entry.sort_key
