"""The client's version (sent in `User-Agent: agentgov-client/<version>`)."""

__version__ = "0.1.0"
