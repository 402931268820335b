"""The app on a person's desktop (issue 22, docs/install.md): its files (icons, launcher,
metainfo, file types, sample recording) as shipped in the package, and ``whiteboard desktop
install`` / ``uninstall``, which put them into, and take them out of, the user's XDG folders.
Qt-free: it copies files and runs the freedesktop tools that index them."""
