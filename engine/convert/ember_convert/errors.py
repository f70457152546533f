"""The one error type of the toolchain: the scripts print its message and exit 1."""


class ConvertError(Exception):
    """A bad input; the message names the file, the field and the bad value."""
