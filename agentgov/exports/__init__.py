"""Audit exports: the trail as files for auditors (see docs/exports.md)."""
