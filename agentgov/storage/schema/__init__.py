"""One module per migration: `m<NNNN>_<name>.py` defining `MIGRATION` (see `storage.migrations`)."""
