"""Child process that compiles the simulator: _compile.py DIR NAME SRC... -- FLAGS.

Run by _build.build() with the caller's Python, so that the calling process
never loads the backend just to build it. cpp_extension loads the result
here, which also proves that the library loads.
"""

import sys

from torch.utils.cpp_extension import load


def main(argv: list[str]) -> None:
    folder, name, *rest = argv
    split = rest.index("--")
    load(
        name=name,
        sources=rest[:split],
        extra_cflags=rest[split + 1 :],
        build_directory=folder,
        is_python_module=False,
        verbose=True,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
