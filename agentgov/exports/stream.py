"""The streamed export: the tenant's matching entries read from the database in pages and encoded as they go.

`export_chunks` yields the encoded file as bytes, one chunk per page of `PAGE_SIZE` entries (keyset pages by
sequence, oldest first), so memory stays flat however long the trail. Raises `DatabaseError` if a page cannot
be read (the caller has usually started answering by then: the response is cut, never completed wrongly).
Cancellation (the client went away) stops it between pages.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentgov.exports.formats import Encoder
from agentgov.storage.audit import AuditRepo, ExportFilter
from agentgov.storage.database import Database

PAGE_SIZE = 1000


async def export_chunks(
    db: Database, tenant_id: str, where: ExportFilter, fmt: str, *, page_size: int = PAGE_SIZE
) -> AsyncIterator[bytes]:
    encoder = Encoder(fmt)
    repo = AuditRepo(db)
    yield encoder.start().encode("utf-8")
    after = 0
    while True:
        page = await repo.export_page(tenant_id, where, after_sequence=after, limit=page_size)
        if not page:
            break
        yield "".join(encoder.row(entry.to_public()) for entry in page).encode("utf-8")
        after = page[-1].sequence
        if len(page) < page_size:
            break
    yield encoder.end().encode("utf-8")
