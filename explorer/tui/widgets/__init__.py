"""Widgets of the interview screen: header, projection list and detail, findings, probes.

Each widget draws one part of a report and takes everything it shows through
`explorer.tui.safe` or `explorer.tui.jsonview`, so agent text is never read as markup.
"""
