"""Before a member leaves: what would be lost, and the question that says so.

Two things can be lost by leaving. When this member is the last one on the board, the board
then exists only in the session recording: nobody holds it any more to hand to a joiner. And
drawings not yet delivered back by the transport may never reach the others. Leaving then asks:
save the board, quit anyway, or cancel. Nothing is asked when nothing would be lost."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from PySide6.QtWidgets import QMessageBox, QWidget

from whiteboard.app.health import MemberRow
from whiteboard.board import Board
from whiteboard.transport.interface import MemberState


class LeaveChoice(Enum):
    SAVE = "save"  # save the board first, then leave
    QUIT = "quit"  # leave anyway
    CANCEL = "cancel"  # stay


@dataclass(frozen=True, slots=True)
class LeavingLoss:
    """What leaving now would lose."""

    last_member: bool  # no other member active on the board
    objects: int  # what the board shows
    undelivered: int  # our drawings not yet delivered (pending, or of a file being sent)

    @classmethod
    def of(cls, rows: Iterable[MemberRow], board: Board, undelivered: int) -> LeavingLoss:
        """From the members panel's rows (a member other than us active?) and our board."""
        others = [r for r in rows if not r.me and r.state is MemberState.ACTIVE]
        return cls(not others, len(board.objects()), undelivered)

    def question(self) -> str | None:
        """The question to ask, or None when leaving loses nothing."""
        parts = []
        if self.undelivered == 1:
            parts.append(
                "A drawing of yours has not reached the others yet: if you leave now, it may never."
            )
        elif self.undelivered:
            parts.append(
                f"{self.undelivered} of your drawings have not reached the others yet: if you "
                "leave now, they may never."
            )
        if self.last_member and self.objects:
            parts.append(
                "You are the last member on this board: once you leave, nobody has it any "
                "more (only the session recording does)."
            )
        if not parts:
            return None
        return "\n\n".join([*parts, "Save the board to a file before leaving?"])


def confirm_leaving(parent: QWidget, loss: LeavingLoss, save: Callable[[], bool]) -> bool:
    """Whether to leave: at once if nothing would be lost; else as the person answers (Save
    leaves only once the board is saved: ``save`` says whether it was)."""
    question = loss.question()
    if question is None:
        return True
    choice = ask_before_leaving(parent, question)
    if choice is LeaveChoice.SAVE:
        return save()
    return choice is LeaveChoice.QUIT


def ask_before_leaving(parent: QWidget, question: str) -> LeaveChoice:
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Leave the board",
        question,
        QMessageBox.StandardButton.Save
        | QMessageBox.StandardButton.Discard
        | QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.button(QMessageBox.StandardButton.Save).setText("&Save board…")
    box.button(QMessageBox.StandardButton.Discard).setText("&Quit anyway")
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Save:
        return LeaveChoice.SAVE
    if answer == QMessageBox.StandardButton.Discard:
        return LeaveChoice.QUIT
    return LeaveChoice.CANCEL


__all__ = ["LeaveChoice", "LeavingLoss", "ask_before_leaving", "confirm_leaving"]
