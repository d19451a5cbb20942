from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentgov.storage import open_database
from agentgov.storage.database import Database


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    """An open, migrated database of each backend in turn, closed afterwards."""
    database = await open_database(database_url)
    try:
        yield database
    finally:
        await database.close()
