"""What the explorer keeps and hands out: the run history and the transcript exports.

- `base`: the `HistoryStore` interface every backend implements, `RunQuery` and the row types.
- `sql`: that interface in portable SQL, written once (`SqlHistory`).
- `marks`: what tells a run's kinds of change apart (declarations digest, signers), from its
  report or its bytes.
- `identity`: which agent a run is of, one across addresses (its card's signing key and name,
  else its card URL).
- `history`: the embedded store, one SQLite file (`History`; one transaction per run).
- `schema`: the history file's format (recognising the file, opening pragmas, migrations).
- `postgres`, `pg_schema`: the shared store in PostgreSQL, and its format and migrations.
- `location`: the history URL (`sqlite:///`, a path, `postgresql://`), read and opened.
- `codec`: a Run as content-addressed documents plus a small volatile part, and back.
- `export`: JSON, Markdown and HTML transcripts, with the formats declared as data.
- `replay`: asking a recorded interview again and comparing (shared by replay, watch and the TUI).
- `redact`: the second line of defence that keeps credentials out of both.

Nothing here imports textual; `history` and `export` do disk I/O, `replay` reaches the network
only through `explorer.interview.procedure`.
"""
