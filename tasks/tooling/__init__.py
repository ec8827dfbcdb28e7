"""Development tooling over the library: evaluations, model training, sample dumps.

Not needed to extract; kept in the package so that ``warclake eval``, ``warclake bench`` and
``warclake demo`` work from an installed wheel.
"""
