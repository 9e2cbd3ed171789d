"""A practitioner's ratings, as a library: reading a file (``ratings_file.read_ratings``), whether
adjustment is warranted (``check``: per group ``diagnostics``, with the Facets-style
``rater_report``, ``agreement`` and the corrected study's advice in ``study_rule``), adjusting
(``adjust``) and how much the methods disagree (``compare``).  Each returns a results object with
``to_frame()``, ``to_dict()`` (the command's JSON) and ``summary()`` (its text); the public names are
re-exported by :mod:`ratercal_cli`, and the commands in :mod:`ratercal_cli.commands.practice` only
parse, call these and print.
"""
