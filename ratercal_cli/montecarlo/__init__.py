"""Monte Carlo replications of a study: tasks in chunks, executors, resume.

A *replication* of a cell is one data set made by
:func:`ratercal_cli.generators.modern.generate_set` (its own SeedSequence, so any one
replication can be made again on its own) and adjusted by every method in every
variant of the config.  Each (replication, variant, method) gives one row of
criteria against the known true scores (:data:`COLUMNS`).

Work is cut into *chunks*: ``chunk_size`` consecutive replications of one cell.
A chunk's rows are a pure function of (config, cell, replication range), computed
by :func:`~ratercal_cli.montecarlo.chunks.run_chunk` wherever it runs (this process, a process pool for
``--jobs N``, or the workers of a Dask cluster for ``--scheduler ADDR``) and
written by *this* process, atomically, to
``RUN/montecarlo/chunks/<cell>/r<start>-<stop>.csv``.  A chunk file that exists and
is valid (header naming the study digest, cell and range; one block of rows per
replication; closing ``# end`` line) is never computed again, so a run killed at
any moment resumes where it stopped.  The merge reads chunks in config order
(cells, then replications), never in completion order, so the merged files and
the summaries are byte-identical whatever the executor and the number of workers.

Modules: ``spec`` (the study and its rows), ``replicate`` (one replication; a chunk as one batch),
``chunks`` (chunk files), ``executors`` (serial, processes, Dask), ``run`` (a run folder),
``statistics``, ``summary`` and ``render`` (the summaries).
"""
