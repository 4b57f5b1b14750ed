"""kael.distributed's ProcessGroup and Work: a group's collectives run inline, or in call
order on its worker thread when asynchronous."""
import queue
import threading

from ._stores import _timeout_seconds


class ProcessGroup:
    """A group of processes: the world (init_process_group) or a subgroup (new_group).

    Example:
        >>> kael.distributed.ProcessGroup  # doctest: +ELLIPSIS
        <class 'kael.distributed.ProcessGroup'>
    """

    def __init__(self, native, ranks):
        self._native = native
        self._ranks = ranks  # the world ranks of the members, in group order
        self._lock = threading.Lock()
        self._pending = 0  # collectives queued on the worker and not yet done
        self._queue = None
        self._worker = None

    def _submit(self, call, async_op):
        """Runs call(native group) after every earlier asynchronous collective: on the worker
        thread with async_op (returning its Work), else here once the worker is idle."""
        with self._lock:
            inline = not async_op and self._pending == 0
            if not inline:
                self._pending += 1
                if self._worker is None:
                    self._queue = queue.Queue()
                    self._worker = threading.Thread(target=self._serve, daemon=True,
                                                    name="kael.distributed worker")
                    self._worker.start()
        if inline:
            call(self._native)
            return None
        work = Work()
        self._queue.put((call, work))
        if async_op:
            return work
        work.wait()
        return None

    def _serve(self):
        while True:
            call, work = self._queue.get()
            if call is None:
                return
            try:
                call(self._native)
            except BaseException as error:  # raised by the caller's wait()
                work._error = error
            finally:
                with self._lock:
                    self._pending -= 1
                work._event.set()

    def _close(self):
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            self._queue.put((None, None))
            worker.join()

    def rank(self):
        """This process's rank in the group.

        Example:
            >>> kael.distributed.ProcessGroup.rank  # doctest: +ELLIPSIS
            <function ...>
        """
        return self._native.rank()

    def size(self):
        """The number of processes in the group.

        Example:
            >>> kael.distributed.ProcessGroup.size  # doctest: +ELLIPSIS
            <function ...>
        """
        return self._native.size()


class Work:
    """The handle of a collective called with async_op=True: the group's worker thread runs its
    collectives in the order they were called (the native calls release the GIL, so Python and
    kael's kernels go on meanwhile); wait() blocks until this one is done and raises its error.

    Example:
        >>> kael.distributed.Work  # doctest: +ELLIPSIS
        <class 'kael.distributed.Work'>
    """

    def __init__(self):
        self._event = threading.Event()
        self._error = None

    def wait(self, timeout=None):
        """Waits for the collective (timeout: a timedelta or seconds); returns True, or False when
        the timeout passed first. Raises the collective's error."""
        seconds = None if timeout is None else _timeout_seconds(timeout)
        if not self._event.wait(seconds):
            return False
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self):
        """Whether the collective is done (successfully or not)."""
        return self._event.is_set()


for _public in (ProcessGroup, Work):
    _public.__module__ = "kael.distributed"
