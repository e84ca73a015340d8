"""Games as data: Minari datasets of the single-seat env's episodes (``handfoot dataset``).

``minari_store.py`` (a dataset written episode by episode, its metadata, its decisions read back),
``episodes.py`` (one seat's episode played through the single-seat env, by an agent or from a game
record), ``records.py`` (game records from an ``evaluate --records`` folder or the browser table's
database, checked), ``cli.py`` (the command).  Minari (the ``data`` extra) is imported only here and by
``backend: bc``; docs/datasets.md.
"""
