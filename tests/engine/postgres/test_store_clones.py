"""Two PostgresStores with one `instance`: Home Assistants cloned from one backup.

Both name their claims alike (`instance`, from Home Assistant's instance
id), yet each must hear the other's writes: notices carry a `sender` of
each store's own, and a feed leaves out only its own store's. Claims stay
shared by name: a conversation one claimed is due to the other too, as
to the same Home Assistant started again (embedding jobs are claimed in
the name the integration passes, `store.instance`, alike).
"""

from __future__ import annotations

from datetime import timedelta

from custom_components.memory.engine import MessageRole
from custom_components.memory.engine.postgres import digest_queue
from tests.engine.conftest import memory
from tests.engine.postgres.services import now_of, side_of, talk
from tests.engine.postgres.stores import PgStores

CLONED = "ha-cloned-instance-id"


async def test_cloned_stores_hear_each_others_writes(stores: PgStores) -> None:
    """Memories, conversations and digestion states of one reach the other's listeners."""
    first = await stores.open(instance=CLONED)
    second = await stores.open(instance=CLONED)
    assert first.instance == second.instance == CLONED
    assert first.sender != second.sender
    one, two = (
        await side_of(first, is_postgres=True),
        await side_of(second, is_postgres=True),
    )
    await first.add(memory("The boiler is serviced in May."))
    assert one.changes.calls == 1
    await two.changes.reach(1)
    row = await talk(
        two.log,
        "c1",
        now_of(stores.clock) - timedelta(hours=1),
        [(MessageRole.USER, "Hello")],
        ended=True,
    )
    await one.changes.reach(2)
    calls = two.changes.calls
    await one.queue.mark_done(row, when=now_of(stores.clock))
    await two.changes.reach(calls + 1)


async def test_cloned_stores_still_share_their_claims(stores: PgStores) -> None:
    """A claim made through one is the other's own; a third Home Assistant waits."""
    first = await stores.open(instance=CLONED, model=None)
    second = await stores.open(instance=CLONED, model=None)
    other = await stores.open(instance="ha-another", model=None)
    log = (await side_of(first, is_postgres=True)).log
    now = now_of(stores.clock)
    row = await talk(
        log, "c1", now - timedelta(hours=1), [(MessageRole.USER, "Hi")], ended=True
    )
    assert [p.id for p in await digest_queue(first).due(now, idle_before=None)] == [row]
    assert await digest_queue(other).due(now, idle_before=None) == []
    assert [p.id for p in await digest_queue(second).due(now, idle_before=None)] == [
        row
    ]
