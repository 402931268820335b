"""The first dialog: host a new board or join one, with the few settings that takes (name,
transport, group) prefilled from last time, and the rest one click away.

Hosting means something only to a transport whose board needs one member to run it (its
description's host role: MTP's master, RFC 1301 §3.1.1): the host is that member. RMP and raw
have no such member, so for them hosting and joining are the same session; hosting just
suggests a fresh group, shown so the host can tell the others."""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import replace

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from whiteboard.app.interfaces import InterfaceChoice
from whiteboard.app.remembered import PassphraseStore
from whiteboard.app.settings import (
    NAME_MAX,
    SessionSettings,
    SettingsProblem,
    default_qsettings,
    fresh_group,
    read_settings,
    save_settings,
)
from whiteboard.app.settings_dialog import (
    FieldWithError,
    SettingsDialog,
    error_label,
    select,
    transport_box,
)
from whiteboard.security import is_view_code
from whiteboard.security.strength import hint
from whiteboard.transport.registry import describe

ENCRYPT_TIP = (
    "Only the passphrase (or the view code) opens this session's recording: replays, "
    "'whiteboard log' and the analytics ask for it"
)
VIEWERS_TIP = (
    "Whoever has the passphrase draws. With this on, a drawer can also copy a view code "
    "(Session menu) for people who may watch but not draw; every stroke then carries a "
    "proof, about 100 bytes. Everyone in the session must choose the same"
)
NO_KEYRING = "This computer has no system keyring: the passphrase is typed for each session"
# The fields this dialog shows; a problem with any other is fixed under "More settings…".
_SHOWN = ("display_name", "transport", "group", "passphrase")


class StartDialog(QDialog):
    """``chosen()`` is the session to open once accepted, None if cancelled."""

    def __init__(
        self,
        settings: SessionSettings | None = None,
        parent: QWidget | None = None,
        *,
        reset: Sequence[SettingsProblem] = (),
        rng: random.Random | None = None,
        interfaces: Sequence[InterfaceChoice] | None = None,
        local_addresses: Collection[str] | None = None,
        keyring: PassphraseStore | None = None,
    ) -> None:
        super().__init__(parent)
        self._keyring = keyring or PassphraseStore()
        self._keyring_available = self._keyring.available()
        self.setWindowTitle("Whiteboard")
        self._base = settings or SessionSettings()
        self._interfaces = interfaces
        self._local_addresses = local_addresses
        self._hosting = False
        # Each mode keeps its own group, so looking at "Host" and back does not lose the
        # group one was told to join, nor change the one offered to host on.
        self._host_group = fresh_group(rng)
        self._join_group = self._base.group
        self._result: SessionSettings | None = None
        self.more_dialog: SettingsDialog | None = None
        self._build(reset)
        self._show(self._base)
        remembered = self._base.remember_passphrase and self._keyring_available
        self.remember_box.setChecked(remembered)
        self.encrypt_box.setChecked(self._base.encrypt_recordings)
        self.viewers_box.setChecked(self._base.allow_viewers)
        self.passphrase_edit.setText(
            self._base.passphrase or (self._keyring.load(self._base.group) if remembered else "")
        )

    def _build(self, reset: Sequence[SettingsProblem]) -> None:
        heading = QLabel("<b>Draw together on one board</b>", self)
        self.host_radio = QRadioButton("&Host a new board", self)
        self.join_radio = QRadioButton("&Join a board", self)
        self.join_radio.setChecked(True)
        modes = QButtonGroup(self)
        modes.addButton(self.host_radio)
        modes.addButton(self.join_radio)
        self.host_radio.toggled.connect(self._mode_changed)

        self.name_edit = QLineEdit(self)
        self.name_edit.setMaxLength(NAME_MAX)
        self.name_edit.textChanged.connect(self._recheck)
        self.transport_box: QComboBox = transport_box(self)
        self.transport_box.currentIndexChanged.connect(self._refresh)
        self.group_edit = QLineEdit(self)
        self.group_edit.setPlaceholderText("239.255.42.99:47999")
        self.group_edit.textChanged.connect(self._refresh)
        # A private session's passphrase (docs/security.md): hidden as typed, never saved.
        self.passphrase_edit = QLineEdit(self)
        self.passphrase_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase_edit.setPlaceholderText(
            "optional: keeps the board private (or a view code, to watch)"
        )
        self.passphrase_edit.textChanged.connect(self._passphrase_changed)
        self.strength_label = QLabel(self)
        self.strength_label.setWordWrap(True)
        self.remember_box = QCheckBox("&Remember it in the system keyring", self)
        if not self._keyring_available:
            self.remember_box.setEnabled(False)
            self.remember_box.setToolTip(NO_KEYRING)
        # A private session's recording, encrypted at rest (docs/session-log.md).
        self.encrypt_box = QCheckBox("&Encrypt the recording with the passphrase", self)
        self.encrypt_box.setToolTip(ENCRYPT_TIP)
        # Whether people may watch with a view code: part of the session's key (keys.py).
        self.viewers_box = QCheckBox("Let people &watch with a view code", self)
        self.viewers_box.setToolTip(VIEWERS_TIP)
        self.rows: dict[str, FieldWithError] = {}
        form = QFormLayout()
        for key, label, editor in (
            ("display_name", "Your &name", self.name_edit),
            ("transport", "&Transport", self.transport_box),
            ("group", "&Group", self.group_edit),
            ("passphrase", "&Passphrase", self.passphrase_edit),
        ):
            self.rows[key] = FieldWithError(editor, self)
            caption = QLabel(label, self)
            caption.setBuddy(editor)
            form.addRow(caption, self.rows[key])
        self._passphrase_changed()

        self.hint_label = QLabel(self)
        self.hint_label.setWordWrap(True)
        # The host reads the group out or copies it to the others.
        self.hint_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice_label = QLabel(self)
        self.notice_label.setWordWrap(True)
        if reset:
            self.notice_label.setText(
                "Some saved settings could not be used and are back to their defaults:\n"
                + "\n".join(p.message for p in reset)
            )
        self.notice_label.setVisible(bool(reset))
        self.problems_label = error_label(self)
        self.more_button = QPushButton("&More settings…", self)
        self.more_button.clicked.connect(self.open_more_settings)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)

        layout = QVBoxLayout(self)
        for mode in (heading, self.host_radio, self.join_radio):
            layout.addWidget(mode)
        layout.addLayout(form)
        for below in (
            self.strength_label,
            self.remember_box,
            self.encrypt_box,
            self.viewers_box,
            self.hint_label,
            self.notice_label,
            self.more_button,
        ):
            layout.addWidget(below)
        layout.addWidget(self.problems_label)
        layout.addWidget(self.buttons)

    # -- state --------------------------------------------------------------------------------

    @property
    def hosting(self) -> bool:
        return self._hosting

    def _show(self, settings: SessionSettings) -> None:
        self.name_edit.setText(settings.display_name)
        select(self.transport_box, settings.transport)
        self.group_edit.setText(settings.group)
        self._refresh()

    def _passphrase_changed(self) -> None:
        self.strength_label.setText(hint(self.passphrase_edit.text()))
        text = self.passphrase_edit.text()
        self.encrypt_box.setEnabled(bool(text))
        # A view code's session is one with viewers: there is nothing to choose.
        self.viewers_box.setEnabled(bool(text) and not is_view_code(text))
        self._recheck()

    def _mode_changed(self) -> None:
        hosting = self.host_radio.isChecked()
        if hosting == self._hosting:
            return
        if self._hosting:
            self._host_group = self.group_edit.text()
        else:
            self._join_group = self.group_edit.text()
        self._hosting = hosting
        self.group_edit.setText(self._host_group if hosting else self._join_group)
        self._refresh()

    def _set_hosting(self, hosting: bool) -> None:
        (self.host_radio if hosting else self.join_radio).setChecked(True)

    def _refresh(self) -> None:
        transport = str(self.transport_box.currentData())
        group = self.group_edit.text().strip()
        name = transport.upper()
        hosted = describe(transport).host_role is not None
        if self._hosting:
            text = f"Tell the others to choose Join, {name} and the group {group}."
            if hosted:
                text = f"You run this board: it ends for everyone when you close it. {text}"
            self.ok_button.setText("&Host")
        else:
            if hosted:
                text = f"An {name} board needs its host: join the group of a board someone hosts."
            else:
                text = "Join the group the person who started the board told you."
            self.ok_button.setText("&Join")
        self.hint_label.setText(text)
        self._recheck()

    def _recheck(self) -> None:
        """A problem shown under a field goes as soon as the field is right again (a message
        about what is already fixed only misleads); no new ones appear while typing."""
        shown = [key for key, row in self.rows.items() if row.error.text()]
        if not shown:
            return
        problems = self.collect().validate(self._local_addresses)
        for key in shown:
            self.rows[key].set_error(
                "\n".join(p.message for p in problems if p.field == key) or None
            )
        if not any(row.error.text() for row in self.rows.values()):
            # The room the messages took goes with them (the width the person gave stays).
            QTimer.singleShot(0, self, self._fit_height)

    def _fit_height(self) -> None:
        layout = self.layout()
        if layout is not None:
            layout.activate()
        self.resize(self.width(), self.minimumSizeHint().height())

    def collect(self) -> SessionSettings:
        """The session as the dialog shows it (unchecked)."""
        transport = str(self.transport_box.currentData())
        role = self._base.mtp_role
        description = describe(transport)
        host, member = description.host_role, description.member_role
        if host is not None and member is not None:
            # Hosting is being the host role (MTP's master); a joiner keeps a viewer's role if
            # that is what they chose, and is otherwise a member (a second master would be
            # refused).
            if self._hosting:
                role = host.word
            elif role == host.word:
                role = member.word
        return replace(
            self._base,
            display_name=self.name_edit.text().strip(),
            transport=transport,
            group=self.group_edit.text().strip(),
            mtp_role=role,
            passphrase=self.passphrase_edit.text(),
            remember_passphrase=self.remember_box.isChecked(),
            encrypt_recordings=self.encrypt_box.isChecked(),
            allow_viewers=self.viewers_box.isChecked(),
        )

    def chosen(self) -> SessionSettings | None:
        return self._result

    # -- actions ------------------------------------------------------------------------------

    def accept(self) -> None:
        settings = self.collect()
        problems = settings.validate(self._local_addresses)
        self._show_problems(problems)
        if problems:
            return  # stay open until the session can be opened
        self._result = settings
        super().accept()

    def _show_problems(self, problems: Sequence[SettingsProblem]) -> None:
        for key, row in self.rows.items():
            row.set_error("\n".join(p.message for p in problems if p.field == key) or None)
        hidden = [p.message for p in problems if p.field not in _SHOWN]
        text = "\n".join(hidden)
        if hidden:
            text += "\nChange these under More settings…"
        self.problems_label.setText(text)
        self.problems_label.setVisible(bool(hidden))
        first = next((self.rows[k].editor for k in _SHOWN if self.rows[k].error.text()), None)
        if first is not None:
            first.setFocus()

    def open_more_settings(self) -> None:
        """The full settings dialog, window-modal (``open``, not ``exec``: this dialog's own
        event loop keeps running)."""
        self.more_dialog = SettingsDialog(
            self.collect(),
            self,
            interfaces=self._interfaces,
            local_addresses=self._local_addresses,
        )
        self.more_dialog.accepted.connect(self._more_accepted)
        self.more_dialog.open()

    def _more_accepted(self) -> None:
        assert self.more_dialog is not None
        settings = self.more_dialog.session_settings()
        if settings is None:
            return
        self._base = settings
        host = describe(settings.transport).host_role
        if host is not None:
            # The role chosen there is the mode here: the dialog must not show "Join" while
            # the settings say host, or undo the role on OK.
            self._set_hosting(settings.mtp_role == host.word)
        self._show(settings)
        self._show_problems([])


def choose_session(
    qsettings: QSettings | None = None,
    parent: QWidget | None = None,
    passphrase: str = "",
    allow_viewers: bool = False,
) -> SessionSettings | None:
    """Load the saved settings, ask, save what was chosen (never its passphrase). None if the
    person cancelled. ``passphrase``: one given outside the dialog (a file, the environment);
    ``allow_viewers``: asked for outside it (--allow-viewers), else as last chosen."""
    store = qsettings if qsettings is not None else default_qsettings()
    loaded = read_settings(store)
    settings = replace(
        loaded.settings,
        passphrase=passphrase,
        allow_viewers=loaded.settings.allow_viewers or allow_viewers,
    )
    dialog = StartDialog(settings, parent, reset=loaded.reset)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        chosen = dialog.chosen()
    finally:
        dialog.deleteLater()
    if chosen is not None:
        save_settings(store, chosen)
        refused = remember(chosen, PassphraseStore())
        if refused is not None:
            QMessageBox.warning(parent, "Whiteboard", refused)
    return chosen


def remember(chosen: SessionSettings, keyring: PassphraseStore) -> str | None:
    """Keep the passphrase in the system keyring if asked, else forget any kept for the
    group; a message for the person if the keyring refused."""
    if chosen.remember_passphrase and chosen.passphrase:
        return keyring.save(chosen.group, chosen.passphrase)
    keyring.forget(chosen.group)
    return None


__all__ = ["StartDialog", "choose_session"]
