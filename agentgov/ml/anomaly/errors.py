"""The detector's own errors."""


class NotEnoughHistory(ValueError):
    """No agent has enough events to learn from (the message gives the numbers)."""


class ModelFormatError(ValueError):
    """A stored model document is not one this version can read (corrupt, or from an unknown format)."""
