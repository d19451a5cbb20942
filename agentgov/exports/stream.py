"""The streamed export: the tenant's matching entries read from the database in pages and encoded as they go,
with a signed manifest stored once the last byte is sent.

`export_chunks` yields the encoded file as bytes, one chunk per page of `PAGE_SIZE` entries (keyset pages by
sequence, oldest first), so memory stays flat however long the trail. The file holds the entries up to the
chain's end when the export started (the manifest's `chain_head`), none appended while it runs. While it goes
it counts the rows, the first and last sequence, the size and the SHA-256 of the bytes; after the last chunk it
signs the manifest (`manifest.build_manifest`) and stores it under `export_id`. Raises `DatabaseError` if a page
cannot be read (the caller has usually started answering by then: the response is cut, never completed wrongly,
and no manifest is stored). Cancellation (the client went away) stops it between pages, without a manifest.
`on_page(rows so far)` is awaited after each page (an export job records its progress there); a caller that
needs the figures afterwards passes its own `tally`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agentgov.exports.formats import Encoder
from agentgov.exports.manifest import Tally, build_manifest
from agentgov.exports.signing import sign_manifest
from agentgov.storage.audit import AuditRepo, ExportFilter
from agentgov.storage.database import Database
from agentgov.storage.exports import ExportRepo

PAGE_SIZE = 1000


async def export_chunks(
    db: Database,
    tenant_id: str,
    where: ExportFilter,
    fmt: str,
    *,
    export_id: str,
    key: Ed25519PrivateKey,
    page_size: int = PAGE_SIZE,
    on_page: Callable[[int], Awaitable[None]] | None = None,
    tally: Tally | None = None,
) -> AsyncIterator[bytes]:
    encoder = Encoder(fmt)
    repo = AuditRepo(db)
    tally = Tally() if tally is None else tally
    head = await repo.head(tenant_id)
    end = None if head is None else head.sequence  # entries appended while the export runs are not in it

    def emit(text: str) -> bytes:
        data = text.encode("utf-8")
        tally.add(data)
        return data

    yield emit(encoder.start())
    after = 0
    while True:
        page = await repo.export_page(tenant_id, where, after_sequence=after, limit=page_size, through_sequence=end)
        if not page:
            break
        tally.rows_seen(page[0].sequence, page[-1].sequence, len(page))
        yield emit("".join(encoder.row(entry.to_public()) for entry in page))
        if on_page is not None:
            await on_page(tally.rows)
        after = page[-1].sequence
        if len(page) < page_size:
            break
    yield emit(encoder.end())
    manifest = build_manifest(export_id=export_id, tenant_id=tenant_id, fmt=fmt, where=where, tally=tally, head=head)
    await ExportRepo(db).save_manifest(tenant_id, export_id, sign_manifest(manifest, key))
