"""pybullet, imported without its banner: its C module prints "pybullet build time: ..." on stderr at import, which
would stand before (or inside) every one-line error of a command that loads an Ergo env."""
from __future__ import annotations

import os
import sys
from types import ModuleType

from .extras import missing


def import_pybullet() -> ModuleType:
    """``import pybullet`` with file descriptor 2 on /dev/null for the import only (once per process)."""
    loaded: ModuleType | None = sys.modules.get("pybullet")
    if loaded is not None:
        return loaded
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        import pybullet
    except ModuleNotFoundError as error:
        if error.name != "pybullet":
            raise
        raise missing("pybullet", "adr/ErgoReacher-v0 and adr/ErgoPusher-v0") from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    module: ModuleType = pybullet
    return module
