"""The ``tool-output-cap`` script: the crate's command, run in this process."""

import os
import signal
import sys

from ._native import command


def main() -> None:
    # Python turns SIGINT into KeyboardInterrupt, which the command would never see; give it
    # the signals as the binary has them, so that Ctrl-C stops a filter and the proxy runs its
    # shutdown on SIGINT, SIGTERM and SIGHUP.
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    sys.stdout.flush()
    code = command(["tool-output-cap", *sys.argv[1:]])
    # The command wrote to the file descriptors itself; leave without Python's teardown.
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
