"""Exit statuses (STABLE, see README)."""

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0  # done; nothing reached the --fail-on level
    FAIL_LEVEL = 1  # a session reached the --fail-on level (or, with --strict, an input failed)
    ERROR = 2  # usage error, bad config, or no input could be read at all
