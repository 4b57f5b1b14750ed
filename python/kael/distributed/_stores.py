"""kael.distributed's rendezvous stores (c10d's Store, TCPStore, FileStore) over the core's."""
import datetime

from .. import _kael

_d = _kael._distributed


def _timeout_seconds(timeout):
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


class Store:
    """A key-value store processes meet through, as c10d's Store: set, get (waits for the key
    until the timeout; RuntimeError after it), add (an atomic counter), check and wait.

    Example:
        >>> import os, tempfile
        >>> store = kael.distributed.FileStore(os.path.join(tempfile.mkdtemp(), "store"))
        >>> store.set("x", b"1")
        >>> store.get("x")
        b'1'
    """

    def __init__(self, native):
        self._native = native

    def set(self, key, value):
        """Stores value (bytes or str) under key."""
        self._native.set(key, value)

    def get(self, key):
        """The bytes under key, waiting for it until the timeout."""
        return self._native.get(key)

    def add(self, key, amount):
        """Adds amount to the counter under key (0 at first) and returns the new value."""
        return self._native.add(key, int(amount))

    def check(self, keys):
        """Whether every key of keys is set now."""
        return self._native.check(list(keys))

    def wait(self, keys, timeout=None):
        """Waits until every key is set (RuntimeError after the timeout)."""
        if timeout is None:
            return self._native.wait(list(keys))
        before = self._native.timeout
        self._native.timeout = _timeout_seconds(timeout)
        try:
            self._native.wait(list(keys))
        finally:
            self._native.timeout = before

    @property
    def timeout(self):
        """The timeout of get and wait, as a datetime.timedelta."""
        return datetime.timedelta(seconds=self._native.timeout)

    def set_timeout(self, timeout):
        """Sets the timeout of get and wait (a timedelta or seconds)."""
        self._native.timeout = _timeout_seconds(timeout)


class TCPStore(Store):
    """A store served over TCP by the process with is_master (port 0 picks a free one: see
    .port), reached by the others at host_name:port, as torch.distributed.TCPStore.

    Example:
        >>> store = kael.distributed.TCPStore("127.0.0.1", 0, is_master=True)
        >>> store.add("count", 2)
        2
    """

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=datetime.timedelta(seconds=300), wait_for_workers=True):
        super().__init__(_d.TCPStore(host_name, int(port), world_size, bool(is_master),
                                     _timeout_seconds(timeout)))

    @property
    def port(self):
        """The port served (the one picked when 0 was asked for)."""
        return self._native.port


class FileStore(Store):
    """A store in one file that every process opens (one machine, or a shared file system), as
    torch.distributed.FileStore.

    Example:
        >>> import os, tempfile
        >>> store = kael.distributed.FileStore(os.path.join(tempfile.mkdtemp(), "store"))
        >>> store.add("n", 1)
        1
    """

    def __init__(self, file_name, world_size=None, timeout=datetime.timedelta(seconds=300)):
        super().__init__(_d.FileStore(file_name, world_size, _timeout_seconds(timeout)))


for _public in (Store, TCPStore, FileStore):
    _public.__module__ = "kael.distributed"
