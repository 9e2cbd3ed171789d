"""A practitioner's ratings file: reading it (``ratings_file``), whether adjustment is warranted
(``diagnostics``, with the Facets-style ``rater_report``, ``agreement`` and the corrected study's
advice in ``study_rule``), and how much the methods disagree (``compare``).  The commands are in
:mod:`ratercal_cli.commands.practice`.
"""
