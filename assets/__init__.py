"""The app's files for the desktop (issue 22, docs/install.md): its icon (an SVG source and
PNGs rendered from it by packaging/render_icons.py), the launcher (.desktop), the AppStream
metainfo, the file types of boards (.wbd) and recordings (.wblog) with their icons, and a
sample recording. Shipped in the wheel as the package ``whiteboard_assets``; read through
:mod:`whiteboard.desktop.assets`, never by a path into the source tree."""
