"""rplasma: a zero-copy client of an rplasma-store (docs/PYTHON.md).

    import numpy, rplasma
    client = rplasma.connect("/run/rplasma/store.sock")
    oid = client.put(numpy.arange(1_000_000))       # one copy, into the store's arena
    with client.get(oid) as buf:                     # read-only, zero-copy
        view = numpy.frombuffer(buf, dtype=numpy.int64)
        ...
        del view                                     # views first, then release

Errors are rplasma.Error subclasses named after the error code (ObjectNotFound, DeadlineExceeded
(alias Timeout), OutOfMemory, ...).
"""

from rplasma._rplasma import *  # noqa: F401,F403  (the extension defines __all__'s names)
from rplasma._rplasma import Error, connect  # noqa: F401  (explicit, for readers and linters)

__all__ = [name for name in dir() if not name.startswith("_")]
