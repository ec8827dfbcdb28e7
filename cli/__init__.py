"""The ``warclake`` command line: one module per group of subcommands, ``main`` ties them."""
