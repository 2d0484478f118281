"""The explorer served to a web browser (`interview-explorer serve`, `demo --browser`).

The same app, not a second UI: each browser tab is an explorer process (explorer.tui.served) run
under Textual's web driver, spoken to with textual-serve's protocol and its xterm.js page. What
this package adds is what textual-serve lacks for a tool that fetches URLs and signs evidence:

- guard: the token, the cookie it becomes, the Host and Origin checks (no I/O);
- binding: where to listen, and the acknowledgement anything but loopback needs;
- environment: the few variables a session's process gets, never the server's whole environment;
- handover: what each session is launched with (options, the demo's agents), passed privately;
- page: the explorer's own page (fonts from the package, no third-party host), security headers;
- session_process: one session's process, started without a shell, stopped for sure;
- server: the aiohttp routes that put it all together.

Nothing here imports textual: the server runs without it (`serve` is a headless command).
"""
