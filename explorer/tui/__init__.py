"""The Textual face of the explorer: screens, widgets and the launcher the CLI calls.

Nothing here is imported by the headless commands; `explorer.cli` reaches this package only
through `explorer.tui.launch.run_tui`, and `launch` itself defers the textual import until the
app is actually built.
"""
