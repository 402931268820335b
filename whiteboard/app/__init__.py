"""The desktop app: a Qt window around one :class:`~whiteboard.replica.Replica` and one
transport. Qt is imported by the modules here only, never by the board or the transports."""
