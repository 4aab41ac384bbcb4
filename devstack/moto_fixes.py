"""Fixes to moto that change its cost, never its answers (``install`` makes them all, once a
process): ``install_cheap_transaction_rollback``, ``install_listed_modules_once`` and
``install_method_names_once``.

Moto's ``DynamoDBBackend.transact_write_items`` first copies, for its rollback, every table the
transaction names: ``copy.deepcopy(self.tables[name])``, every item of the table, on every
``TransactWriteItems``. py-spy put it at ~20% of the local stack's CPU over the test run, and the
cost grows with the data: with a base of 2,000 pages every page write copied the whole pages
table. Each copied item is also kept in moto's ``Item.instances_tracked`` (its dashboard's list of
every model instance, emptied only by a reset), so the long-running local stack's memory grew by
a table's worth of items a transaction as well.

The fix keeps moto's method, and its rollback, as they are; only the copy it rolls back to is
made cheaper. While the method runs, its module's ``copy.deepcopy`` of one of the transaction's
tables returns the table deep-copied as moto would copy it, except that its ``items`` are
copied one level (the dict of hash keys, and the range-key dict of each hash key a transact item
names) with only the items the transaction names deep-copied; every other item is the same
object in the copy and in the table. That is enough because the transaction changes no item it
does not name: a Put replaces the entry under its key, a Delete pops it, an Update changes the
named item in place (deep-copied, so the copy keeps it as it was), a ConditionCheck only reads.
The named keys are computed as moto computes them (``DynamoType`` of the key's attributes; a
Put's from its item), and a table's stream records (if it has a stream) are copied as a list.

Whatever does not fit falls back to moto's own full copy: a transact item whose key cannot be
read (the transaction then copies every table in full, and moto answers it as it always did),
a copy moto asks for outside a patched call or of anything but the transaction's tables (its
``update_item`` deep-copies the item it changes: that stays a real copy), any error while
making the cheap copy.

Moto's server finds the service of each request by its host first: ``host in
backends.list_of_moto_modules()``, a generator that lists moto's package folder and asks
whether each of its ~150 entries is a folder, on every request (0.34 ms of CPU each, to learn
that ``127.0.0.1`` is no service). The folder does not change while a process runs:
``install_listed_modules_once`` lists it once (0.02 ms a request after). And each request's
response class is asked for its method names (``inspect.getmembers``, 0.2 ms for DynamoDB's) to
learn whether the action is one of them: ``install_method_names_once`` asks each class once.
"""

from __future__ import annotations

import copy
import functools
import threading
import types
from typing import Any

from moto import backends
from moto.core import responses
from moto.dynamodb import models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table

_MARK = "_devstack_moto_fix"
"""Set on each function this module puts in moto's place: what a second install finds."""

_Keys = dict[Any, set[Any] | None]
"""The keys a transaction names in one table: hash key -> its range keys (None: no range key)."""


class _Transaction:
    """The tables one ``transact_write_items`` call names, with their keys, and their copies."""

    def __init__(self, touched: dict[int, tuple[Table, _Keys]]) -> None:
        self.touched = touched
        self.copies: dict[int, Table] = {}


_current = threading.local()
"""``.transaction``: the call under way in this thread (the unit tier may run moto from several)."""


def install() -> None:
    """Every fix of this module (each once a process)."""
    install_cheap_transaction_rollback()
    install_listed_modules_once()
    install_method_names_once()


def install_cheap_transaction_rollback() -> None:
    """Make moto's rollback copy of a transaction's tables cost what the transaction touches
    (module docstring). Once a process; calling it again changes nothing."""
    with _installing:
        _install()


_installing = threading.Lock()


def install_listed_modules_once() -> None:
    """``moto.backends.list_of_moto_modules`` listed once a process (module docstring)."""
    with _installing:
        if getattr(backends.list_of_moto_modules, _MARK, False):
            return
        listed = tuple(backends.list_of_moto_modules())

        def list_of_moto_modules() -> tuple[str, ...]:
            return listed

        setattr(list_of_moto_modules, _MARK, True)
        backends.list_of_moto_modules = list_of_moto_modules  # type: ignore[assignment]


def install_method_names_once() -> None:
    """``moto.core.responses``' ``method_names_from_class`` asked once a class (module docstring):
    a class's functions do not change while moto serves."""
    with _installing:
        original = responses.method_names_from_class  # type: ignore[attr-defined]
        if getattr(original, _MARK, False):
            return
        named: dict[object, list[str]] = {}

        def method_names_from_class(clazz: object) -> list[str]:
            names = named.get(clazz)
            if names is None:
                names = named[clazz] = original(clazz)
            return names

        setattr(method_names_from_class, _MARK, True)
        responses.method_names_from_class = method_names_from_class  # type: ignore[attr-defined]


def _install() -> None:
    original = DynamoDBBackend.transact_write_items
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        previous = getattr(_current, "transaction", None)
        _current.transaction = _transaction(self, transact_items)
        try:
            return original(self, transact_items)  # type: ignore[no-any-return]
        finally:
            _current.transaction = previous

    setattr(transact_write_items, _MARK, True)
    # The ``copy`` that moto.dynamodb.models calls: deepcopy is ours, the rest the real module's.
    models.copy = _RollbackCopy()  # type: ignore[attr-defined,assignment]
    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


class _RollbackCopy(types.ModuleType):
    """Stands in for the ``copy`` module inside ``moto.dynamodb.models`` (moto 5.2.5). That module
    deep-copies twice: a transaction's tables for its rollback, cheap here while the transaction
    runs in this thread, and ``update_item``'s item before it changes it (its stream's old
    image), which stays ``copy.deepcopy``, as does everything outside a transaction. Were a later
    moto to copy its rollback otherwise, this would do nothing, and change nothing."""

    def __init__(self) -> None:
        super().__init__("copy")

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    def deepcopy(self, x: Any, memo: dict[int, Any] | None = None) -> Any:
        transaction: _Transaction | None = getattr(_current, "transaction", None)
        if transaction is None or memo is not None:
            return copy.deepcopy(x, memo)
        entry = transaction.touched.get(id(x))
        if entry is None or entry[0] is not x:
            return copy.deepcopy(x)
        # Moto copies a table once per transact item naming it, all before the first write: the
        # copies are alike, so one serves them all.
        snapshot = transaction.copies.get(id(x))
        if snapshot is None:
            try:
                snapshot = _snapshot(x, entry[1])
            except Exception:  # anything unexpected: moto's own copy, whatever it costs
                snapshot = copy.deepcopy(x)
            transaction.copies[id(x)] = snapshot
        return snapshot


def _transaction(backend: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> _Transaction | None:
    """The keys each table gets written or read at, as moto computes them; None (moto's full
    copies) if one cannot be read."""
    try:
        touched: dict[int, tuple[Table, _Keys]] = {}
        for transact_item in transact_items:
            op_type, op = next(iter(transact_item.items()))
            table = _table(backend, op.get("TableName"))
            if table is None:
                continue  # no table by that name or ARN: moto's op fails before it writes
            key = op["Item"] if op_type == "Put" else op["Key"]
            keys = touched.setdefault(id(table), (table, {}))[1]
            hash_key = DynamoType(key[table.hash_key_attr])
            if table.range_key_attr is None:
                keys[hash_key] = None
            else:
                ranges = keys.setdefault(hash_key, set())
                assert ranges is not None
                ranges.add(DynamoType(key[table.range_key_attr]))
        return _Transaction(touched)
    except Exception:
        return None


def _table(backend: DynamoDBBackend, name: Any) -> Table | None:
    """The table moto's ``get_table`` finds (by name, else by ARN), None for none."""
    if not name:
        return None
    table: Table | None = backend.tables.get(name)
    if table is None:
        table = next((t for t in list(backend.tables.values()) if t.table_arn == name), None)
    return table


def _snapshot(table: Table, keys: _Keys) -> Table:
    """``copy.deepcopy(table)`` but for its items: only those under ``keys`` are deep-copied."""
    memo: dict[int, Any] = {}
    live = table.items
    items = live.copy()  # a defaultdict's copy keeps its default factory
    for hash_key, ranges in keys.items():
        current = live.get(hash_key)  # .get: indexing the live defaultdict would add an entry
        if current is None:
            continue
        if ranges is None:
            items[hash_key] = copy.deepcopy(current, memo)
            continue
        partition = current.copy()
        for range_key in ranges:
            item = partition.get(range_key)
            if item is not None:
                partition[range_key] = copy.deepcopy(item, memo)
        items[hash_key] = partition
    memo[id(live)] = items
    shard = table.stream_shard
    if shard is not None:
        memo[id(shard.items)] = list(shard.items)  # a StreamRecord is not changed once made
    snapshot: Table = copy.deepcopy(table, memo)
    return snapshot
