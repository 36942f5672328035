"""The two ways a `hurray` subcommand fails (exit statuses: docs/reference/cli.md)."""

from __future__ import annotations


class Refused(Exception):
    """The target cannot hold a tensor or a KV entry exactly (exit status 1).
    The message says what and why; the command names the tensor or key."""


class CliError(Exception):
    """A file that cannot be read or written, an unknown format, a bad
    argument (exit status 2)."""
