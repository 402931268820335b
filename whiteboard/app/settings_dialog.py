"""The settings dialog: edits a :class:`~whiteboard.app.settings.SessionSettings`, protocol
parameters included, and will not close on OK until the settings can be used."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QIcon, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from whiteboard.app.interfaces import InterfaceChoice, list_interfaces
from whiteboard.app.settings import (
    NAME_MAX,
    PICTURE_RANGES,
    PROFILES,
    SessionSettings,
    SettingsProblem,
    TransportParamsSpec,
    params_spec,
    transports,
)
from whiteboard.transport.registry import available_transports, describe


def transport_box(parent: QWidget) -> QComboBox:
    """The transports of this build, each shown by its description's title, its summary as
    the item's tooltip."""
    box = QComboBox(parent)
    for description in available_transports():
        box.addItem(description.title, description.name)
        box.setItemData(box.count() - 1, description.summary, Qt.ItemDataRole.ToolTipRole)
    return box


PROFILE_LABELS: dict[str, str] = {
    "lan": "LAN: today's networks (recommended)",
    "seed": "Seed: the original papers' values",
}
ERROR_STYLE = "color: #c62828;"


def combo(items: Mapping[str, str], parent: QWidget) -> QComboBox:
    """A combo box of ``{value: label}``, the value kept as item data."""
    box = QComboBox(parent)
    for value, label in items.items():
        box.addItem(label, value)
    return box


def select(box: QComboBox, value: object) -> None:
    index = box.findData(value)
    if index >= 0:
        box.setCurrentIndex(index)


class WrappedLabel(QLabel):
    """A word-wrapped label that always gets the height its text needs at its width.

    Qt lays a top-level window out by minimum sizes, which ignore a wrapped label's
    height-for-width: a two-line message got one line's height and was clipped top and
    bottom. Asking for that height as the minimum, whenever the width or the text changes,
    makes the layout (and the dialog) grow to show it whole."""

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        self.setMinimumHeight(self.text_height(self.width()))

    def text_height(self, width: int) -> int:
        """The height the text needs at ``width`` (not ``heightForWidth``: a QLabel's is at
        least its minimum height, which would keep the tallest height it ever had)."""
        if not self.text():
            return 0
        margins = self.contentsMargins()
        inner = width - margins.left() - margins.right() - 2 * self.margin()
        flags = Qt.TextFlag.TextWordWrap | self.alignment()
        text = self.fontMetrics().boundingRect(QRect(0, 0, max(inner, 1), 0), flags, self.text())
        return text.height() + margins.top() + margins.bottom() + 2 * self.margin()


def error_label(parent: QWidget) -> QLabel:
    """A field's or the form's problem: red, word-wrapped, hidden until there is one."""
    label = WrappedLabel(parent)
    label.setStyleSheet(ERROR_STYLE)
    label.setWordWrap(True)
    label.hide()
    return label


class FieldWithError(QWidget):
    """An editor with its problem written right under it (hidden while there is none), so the
    person reads what is wrong next to what to change."""

    def __init__(self, editor: QWidget, parent: QWidget) -> None:
        super().__init__(parent)
        self.editor = editor
        self.error = error_label(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(editor)
        layout.addWidget(self.error)

    def set_error(self, message: str | None) -> None:
        self.error.setText(message or "")
        self.error.setVisible(bool(message))


def swatch(argb: int) -> QIcon:
    pixmap = QPixmap(32, 32)
    pixmap.fill(QColor.fromRgba(argb))
    return QIcon(pixmap)


def _format(value: object) -> str:
    if isinstance(value, float):
        short = format(value, "g")
        return short if float(short) == value else repr(value)
    return str(value)


class ParamsForm(QWidget):
    """One transport's parameters, generated from its params dataclass. A field left empty (or
    at the profile's value) is no override: the profile's value shows as the placeholder, and
    follows the profile when it changes."""

    def __init__(
        self,
        spec: TransportParamsSpec,
        profile: str,
        overrides: Mapping[str, object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.spec = spec
        self.profile = profile
        self.editors: dict[str, QWidget] = {}
        self.labels: dict[str, QLabel] = {}
        layout = QFormLayout(self)
        for param in spec.fields:
            if param.kind is bool:
                editor: QWidget = QCheckBox(self)
            elif param.choices:
                editor = combo({c: c for c in param.choices}, self)
            else:
                editor = QLineEdit(self)
            editor.setObjectName(f"param_{param.name}")
            label = QLabel(param.name, self)
            label.setBuddy(editor)
            layout.addRow(label, editor)
            self.editors[param.name] = editor
            self.labels[param.name] = label
        self.set_overrides(overrides)

    def set_overrides(self, overrides: Mapping[str, object]) -> None:
        for name, editor in self.editors.items():
            value = overrides.get(name, self.spec.default(self.profile, name))
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QComboBox):
                select(editor, value)
            elif isinstance(editor, QLineEdit):
                editor.setText(_format(value) if name in overrides else "")
        self._show_defaults()
        self.mark(())

    def set_profile(self, profile: str) -> None:
        # A check box or choice still at the old profile's value was never overridden: it
        # moves to the new profile's. Line edits show the default as a placeholder anyway.
        for name, editor in self.editors.items():
            old, new = (self.spec.default(p, name) for p in (self.profile, profile))
            if isinstance(editor, QCheckBox) and editor.isChecked() == old:
                editor.setChecked(bool(new))
            elif isinstance(editor, QComboBox) and editor.currentData() == old:
                select(editor, new)
        self.profile = profile
        self._show_defaults()

    def _show_defaults(self) -> None:
        for name, editor in self.editors.items():
            default = _format(self.spec.default(self.profile, name))
            if isinstance(editor, QLineEdit):
                editor.setPlaceholderText(default)
            param = self.spec.param(name)
            unit = f" {param.unit}" if param.unit else ""
            bounds = (
                f" (from {_format(param.minimum)} to {_format(param.maximum)}{unit})"
                if param.minimum is not None and param.maximum is not None
                else ""
            )
            editor.setToolTip(
                f"{param.help}.\n{name}: {default}{unit} in the {self.profile} profile{bounds}"
            )

    def overrides(self) -> tuple[dict[str, object], list[SettingsProblem]]:
        """The values that differ from the profile's, and a problem for each field that is not
        a value of its kind (ranges are the transport's to check)."""
        result: dict[str, object] = {}
        problems: list[SettingsProblem] = []
        transport = self.spec.transport
        for param in self.spec.fields:
            editor = self.editors[param.name]
            default = self.spec.default(self.profile, param.name)
            if isinstance(editor, QCheckBox):
                value: object = editor.isChecked()
            elif isinstance(editor, QComboBox):
                value = editor.currentData()
            elif isinstance(editor, QLineEdit):
                text = editor.text().strip()
                if not text:
                    continue
                try:
                    value = _parse(text, param.kind)
                except ValueError as exc:
                    where = f"advanced.{transport}.{param.name}"
                    message = f"{transport} parameter {param.name} {exc}, got {text!r}"
                    problems.append(SettingsProblem(where, message))
                    continue
            if value != default:
                result[param.name] = value
        return result, problems

    def mark(self, names: Collection[str]) -> None:
        for name, label in self.labels.items():
            label.setStyleSheet(ERROR_STYLE if name in names else "")


def _parse(text: str, kind: type) -> object:
    if kind is int:
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)  # "1e3" and "64.0" are whole numbers too
        except ValueError:
            number = math.nan
        if not number.is_integer():  # nan and inf are not
            raise ValueError("must be a whole number")
        return int(number)
    if kind is float:
        try:
            number = float(text.replace(",", "."))  # a comma is a decimal point in many locales
        except ValueError:
            raise ValueError("must be a number") from None
        if not math.isfinite(number):
            raise ValueError("must be a finite number")
        return number
    return text


class SettingsDialog(QDialog):
    """Edits session settings. ``session_settings()`` is the result once accepted (OK only
    closes the dialog when :meth:`SessionSettings.validate` finds nothing)."""

    def __init__(
        self,
        settings: SessionSettings | None = None,
        parent: QWidget | None = None,
        *,
        interfaces: Sequence[InterfaceChoice] | None = None,
        local_addresses: Collection[str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Session settings")
        self._interfaces = list(interfaces) if interfaces is not None else list_interfaces()
        self._local_addresses = local_addresses
        self._result: SessionSettings | None = None
        self._colour = 0
        self._own_colour = False
        self._build()
        self.set_settings(settings or SessionSettings())

    # -- building -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.transport_box = transport_box(self)
        self.group_edit = QLineEdit(self)
        self.group_edit.setPlaceholderText("239.255.42.99:47999")
        self.group_edit.setToolTip("Everyone with the same group and port draws on one board")
        self.iface_box = QComboBox(self)
        self.ttl_spin = QSpinBox(self)
        self.ttl_spin.setRange(0, 255)
        self.ttl_spin.setToolTip(
            "Multicast hops: 1 keeps the board on your network, 0 on this computer"
        )
        self.name_edit = QLineEdit(self)
        self.name_edit.setMaxLength(NAME_MAX)
        self.colour_button = QPushButton(self)
        self.colour_button.clicked.connect(self._pick_colour)
        self.colour_dialog = QColorDialog(self)
        self.colour_dialog.colorSelected.connect(lambda c: self._set_colour(c.rgba(), own=True))
        # Unchecked once a colour is picked: a picked colour is kept, even if another member
        # has it; a free default colour is chosen per session otherwise.
        self.auto_colour_box = QCheckBox("&Free colour each session", self)
        self.auto_colour_box.setToolTip(
            "A colour no other member uses, chosen when you join; pick a colour to keep yours"
        )
        self.auto_colour_box.toggled.connect(self._auto_colour_toggled)
        colour_row = QWidget(self)
        colour_layout = QHBoxLayout(colour_row)
        colour_layout.setContentsMargins(0, 0, 0, 0)
        colour_layout.addWidget(self.colour_button)
        colour_layout.addWidget(self.auto_colour_box, 1)
        self.role_box = QComboBox(self)
        self._role = ""  # kept while a transport without roles is shown, for switching back
        self.role_box.currentIndexChanged.connect(self._role_chosen)
        self.profile_box = combo({p: PROFILE_LABELS[p] for p in PROFILES}, self)
        # Pictures put on the board are brought within these (File > Insert image, paste).
        self.picture_side_spin = QSpinBox(self)
        self.picture_side_spin.setRange(*PICTURE_RANGES["picture_side"][:2])
        self.picture_side_spin.setSuffix(" px")
        self.picture_kib_spin = QSpinBox(self)
        self.picture_kib_spin.setRange(*PICTURE_RANGES["picture_kib"][:2])
        self.picture_kib_spin.setSuffix(" KiB")
        picture_row = QWidget(self)
        picture_row.setToolTip(
            "A larger picture is scaled down to this long side, then encoded within this size"
        )
        picture_layout = QHBoxLayout(picture_row)
        picture_layout.setContentsMargins(0, 0, 0, 0)
        picture_layout.addWidget(self.picture_side_spin)
        picture_layout.addWidget(self.picture_kib_spin)

        self.rows: dict[str, FieldWithError] = {}
        form = QFormLayout()
        for key, label, editor in (
            ("transport", "&Transport", self.transport_box),
            ("group", "&Group", self.group_edit),
            ("iface", "&Interface", self.iface_box),
            ("ttl", "TT&L", self.ttl_spin),
            ("display_name", "Your &name", self.name_edit),
            ("colour", "&Colour", colour_row),
            ("mtp_role", "&Role", self.role_box),
            ("profile", "&Profile", self.profile_box),
            ("picture_side", "Pictures &up to", picture_row),
        ):
            row = FieldWithError(editor, self)
            self.rows[key] = row
            caption = QLabel(label, self)
            caption.setBuddy(editor)
            form.addRow(caption, row)

        self.advanced_toggle = QToolButton(self)
        self.advanced_toggle.setCheckable(True)
        self.advanced_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_toggle.toggled.connect(self._show_advanced)
        self.advanced_box = QWidget(self)
        hint = QLabel(
            "Protocol parameters. Leave a field empty for the profile's value (shown in grey); "
            "docs/rmp.md and docs/mtp.md explain each one.",
            self.advanced_box,
        )
        hint.setWordWrap(True)
        self.advanced_error = error_label(self.advanced_box)
        self.advanced_stack = QStackedWidget(self.advanced_box)
        self.advanced_forms: dict[str, ParamsForm] = {}
        for transport in transports():
            form_widget = ParamsForm(params_spec(transport), "lan", {}, self.advanced_stack)
            self.advanced_forms[transport] = form_widget
            self.advanced_stack.addWidget(form_widget)
        scroll = QScrollArea(self.advanced_box)
        scroll.setWidget(self.advanced_stack)
        scroll.setWidgetResizable(True)
        scroll.setMinimumHeight(220)
        box_layout = QVBoxLayout(self.advanced_box)
        box_layout.setContentsMargins(0, 0, 0, 0)
        for widget in (hint, self.advanced_error, scroll):
            box_layout.addWidget(widget)
        self.advanced_box.hide()

        self.problems_label = error_label(self)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults,
            self,
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        restore = self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        restore.clicked.connect(self.restore_defaults)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.advanced_toggle)
        layout.addWidget(self.advanced_box)
        layout.addWidget(self.problems_label)
        layout.addWidget(self.buttons)

        self.transport_box.currentIndexChanged.connect(self._transport_changed)
        self.profile_box.currentIndexChanged.connect(self._profile_changed)

    # -- reading and writing the widgets ------------------------------------------------------

    def set_settings(self, settings: SessionSettings) -> None:
        """Show ``settings`` in the widgets (problems cleared)."""
        # What this dialog does not show (a private session's passphrase, whether people may
        # watch, whether its recording is encrypted) is kept from these, never reset: a
        # person who renames themselves stays in the private session.
        self._base = settings
        select(self.transport_box, settings.transport)
        self.group_edit.setText(settings.group)
        self._fill_interfaces(settings.iface)
        self.ttl_spin.setValue(max(0, min(255, settings.ttl)))
        self.name_edit.setText(settings.display_name)
        self._set_colour(settings.colour, settings.own_colour)
        self._role = settings.mtp_role
        select(self.profile_box, settings.profile)
        self.picture_side_spin.setValue(settings.picture_side)
        self.picture_kib_spin.setValue(settings.picture_kib)
        for transport, form in self.advanced_forms.items():
            form.profile = self.profile
            form.set_overrides(settings.overrides(transport))
        self._transport_changed()
        self.show_problems([])

    def _fill_interfaces(self, current: str) -> None:
        self.iface_box.clear()
        for choice in self._interfaces:
            self.iface_box.addItem(choice.label, choice.address)
        if self.iface_box.findData(current) < 0:
            # A saved address this machine lacks: shown as it is, and refused on OK, rather
            # than silently replaced by another interface.
            self.iface_box.addItem(f"{current} (not found on this computer)", current)
        select(self.iface_box, current)

    @property
    def transport(self) -> str:
        return str(self.transport_box.currentData())

    @property
    def profile(self) -> str:
        return str(self.profile_box.currentData())

    def collect(self) -> tuple[SessionSettings, list[SettingsProblem]]:
        """The settings as the widgets show them, and the fields that could not be read."""
        advanced: dict[str, dict[str, object]] = {}
        problems: list[SettingsProblem] = []
        for transport, form in self.advanced_forms.items():
            overrides, form_problems = form.overrides()
            if overrides:
                advanced[transport] = overrides
            problems.extend(form_problems)
        settings = replace(
            self._base,
            transport=self.transport,
            group=self.group_edit.text().strip(),
            iface=str(self.iface_box.currentData()),
            ttl=self.ttl_spin.value(),
            display_name=self.name_edit.text().strip(),
            colour=self._colour,
            own_colour=self._own_colour,
            mtp_role=self._role,
            profile=self.profile,
            advanced=advanced,
            picture_side=self.picture_side_spin.value(),
            picture_kib=self.picture_kib_spin.value(),
        )
        return settings, problems

    def session_settings(self) -> SessionSettings | None:
        """The accepted settings; None until OK succeeds."""
        return self._result

    # -- actions ------------------------------------------------------------------------------

    def accept(self) -> None:
        settings, problems = self.collect()
        problems += settings.validate(self._local_addresses)
        self.show_problems(problems)
        if problems:
            return  # stay open: the person fixes what the messages say
        self._result = settings
        super().accept()

    def restore_defaults(self) -> None:
        self.set_settings(SessionSettings())

    def show_problems(self, problems: Sequence[SettingsProblem]) -> None:
        by_field: dict[str, list[str]] = {}
        for problem in problems:
            by_field.setdefault(problem.field, []).append(problem.message)
        for key, row in self.rows.items():
            row.set_error("\n".join(by_field.pop(key, [])) or None)
        advanced = [p for p in problems if p.field.startswith("advanced")]
        lines = []
        for transport, form in self.advanced_forms.items():
            mine = [p for p in advanced if p.field.split(".")[1:2] == [transport]]
            form.mark(_named_params(mine, form.editors))
            prefix = "" if transport == self.transport else f"{transport.upper()}: "
            lines += [prefix + p.message for p in mine]
        lines += [p.message for p in advanced if p.field.split(".")[1:2] == []]
        self.advanced_error.setText("\n".join(lines))
        self.advanced_error.setVisible(bool(lines))
        if lines:
            self.advanced_toggle.setChecked(True)
        self.problems_label.setText("Correct the settings marked in red." if problems else "")
        self.problems_label.setVisible(bool(problems))
        first = next((row.editor for row in self.rows.values() if row.error.text()), None)
        if first is not None:
            first.setFocus()

    def _pick_colour(self) -> None:
        self.colour_dialog.setCurrentColor(QColor.fromRgba(self._colour))
        self.colour_dialog.open()  # not exec(): the settings dialog's loop keeps running

    def _set_colour(self, argb: int, own: bool) -> None:
        self._colour = argb
        self._own_colour = own
        self.auto_colour_box.setChecked(not own)
        self.colour_button.setIcon(swatch(argb))
        self.colour_button.setText(QColor.fromRgba(argb).name())

    def _auto_colour_toggled(self, automatic: bool) -> None:
        self._own_colour = not automatic

    def _transport_changed(self) -> None:
        transport = self.transport
        self._fill_roles()
        self.advanced_stack.setCurrentWidget(self.advanced_forms[transport])
        self.advanced_toggle.setText(f"Advanced: {transport.upper()} parameters")

    def _fill_roles(self) -> None:
        """The roles of the transport shown; none (and disabled) for one whose members are
        all alike, the chosen role kept for switching back."""
        roles = describe(self.transport).roles
        kept = self._role
        self.role_box.blockSignals(True)
        self.role_box.clear()
        for role in roles:
            self.role_box.addItem(role.label, role.word)
        if not roles:
            self.role_box.addItem("None: every member is alike", kept)
        self.role_box.blockSignals(False)
        self.role_box.setEnabled(bool(roles))
        self.role_box.setToolTip(" ".join(f"{r.label}: {r.help}." for r in roles))
        select(self.role_box, kept)
        self._role = str(self.role_box.currentData())

    def _role_chosen(self) -> None:
        if self.role_box.isEnabled():
            self._role = str(self.role_box.currentData())

    def _profile_changed(self) -> None:
        for form in self.advanced_forms.values():
            form.set_profile(self.profile)

    def _show_advanced(self, shown: bool) -> None:
        self.advanced_box.setVisible(shown)
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.advanced_toggle.setArrowType(arrow)
        self.adjustSize()


def _named_params(problems: Sequence[SettingsProblem], names: Collection[str]) -> set[str]:
    """The parameters a problem is about: named in its field, or in the transport's message
    ("mtp window must be at most 1024 packets")."""
    found: set[str] = set()
    for problem in problems:
        parts = problem.field.split(".")
        if len(parts) == 3:
            found.add(parts[2])
        found.update(n for n in names if re.search(rf"\b{re.escape(n)}\b", problem.message))
    return found


def edit_settings(
    settings: SessionSettings, parent: QWidget | None = None
) -> SessionSettings | None:
    """Run the dialog modally: the new settings, or None if cancelled."""
    dialog = SettingsDialog(settings, parent)
    try:
        return dialog.session_settings() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


__all__ = [
    "PROFILE_LABELS",
    "FieldWithError",
    "ParamsForm",
    "SettingsDialog",
    "edit_settings",
    "transport_box",
]
