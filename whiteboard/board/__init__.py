"""The board model: op records, their wire codec, and the replicated board. Qt-free.

See docs/board-model.md for the op kinds, the wire format and the semantics.
"""

from whiteboard.board.codec import MAX_OP_BYTES, OpDecodeError, decode_op, encode_op
from whiteboard.board.model import (
    Board,
    BoardObject,
    Change,
    OrderKey,
    SnapshotError,
    check_order_key,
)
from whiteboard.board.ops import (
    Clear,
    DrawingOp,
    Erase,
    InvalidOpError,
    Move,
    Op,
    OpId,
    OpKind,
    Redo,
    Reorder,
    Restyle,
    Shape,
    Stroke,
    TargetedOp,
    Text,
    TextEdit,
    Tool,
    Transform,
    Undo,
    ZPlace,
)
from whiteboard.board.synthetic import synthetic_op, synthetic_stroke

__all__ = [
    "MAX_OP_BYTES",
    "Board",
    "BoardObject",
    "Change",
    "Clear",
    "DrawingOp",
    "Erase",
    "InvalidOpError",
    "Move",
    "Op",
    "OpDecodeError",
    "OpId",
    "OpKind",
    "OrderKey",
    "Redo",
    "Reorder",
    "Restyle",
    "Shape",
    "SnapshotError",
    "Stroke",
    "TargetedOp",
    "Text",
    "TextEdit",
    "Tool",
    "Transform",
    "Undo",
    "ZPlace",
    "check_order_key",
    "decode_op",
    "encode_op",
    "synthetic_op",
    "synthetic_stroke",
]
