#!/usr/bin/env python3
"""Run agentgov: `python run.py [--host H] [--port P]`. See README.md for settings and commands."""

from agentgov.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
