"""Click commands, one module per subcommand (added to the group in ``cli.py``)."""
