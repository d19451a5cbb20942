"""Text from requests cannot forge or rewrite log lines: every record stays one line without raw control
characters, in both log formats."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterator

import pytest

from agentgov.logs import JsonFormatter, KeyValueFormatter

RAW_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
HOSTILE_PATH = "/api/v1/agents/%1b%5b2J%00x%0d%e2%80%a8"
FORGING_PATH = "/api/v1/agents/x%0d%0ats=forged%20level=error"


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def captured() -> Iterator[Capture]:
    handler = Capture()
    logger = logging.getLogger("agentgov")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


async def test_a_hostile_path_is_logged_on_one_escaped_line(client, tenant, captured: Capture) -> None:
    response = await client.get(HOSTILE_PATH, headers={"X-API-Key": tenant["api_key"]})
    assert 400 <= response.status_code < 500
    request_lines = [r for r in captured.records if r.getMessage() == "request"]
    assert request_lines, "the request was not logged"
    record = request_lines[-1]
    assert "\x1b" in record.__dict__["fields"]["path"]  # the hostile text really reached the log record
    text_line = KeyValueFormatter().format(record)
    assert "\n" not in text_line and not RAW_CONTROL.search(text_line)
    assert "\\u001b[2J" in text_line and "\\u0000" in text_line and "\\r" in text_line
    json_line = JsonFormatter().format(record)
    assert "\n" not in json_line and not RAW_CONTROL.search(json_line)
    assert json.loads(json_line)["path"] == record.__dict__["fields"]["path"]


async def test_a_forged_line_stays_inside_its_value(client, tenant, captured: Capture) -> None:
    await client.get(FORGING_PATH, headers={"X-API-Key": tenant["api_key"]})
    record = [r for r in captured.records if r.getMessage() == "request"][-1]
    text_line = KeyValueFormatter().format(record)
    assert "\n" not in text_line and '"/api/v1/agents/x\\r\\nts=forged level=error"' in text_line


def test_a_traceback_keeps_its_lines_and_escapes_the_rest() -> None:
    try:
        raise ValueError("bad name \x1b[31mred\x00")
    except ValueError:
        record = logging.LogRecord("agentgov.x", logging.ERROR, __file__, 1, "failed", None, None)

        record.exc_info = sys.exc_info()
    line = KeyValueFormatter().format(record)
    assert "Traceback" in line and "\n" in line
    assert not RAW_CONTROL.search(line.replace("\n", ""))
    assert "\\x1b[31mred\\x00" in line
