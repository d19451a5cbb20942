"""SIEM forwarding: security events of every tenant sent to one platform-wide destination (docs/siem.md)."""
