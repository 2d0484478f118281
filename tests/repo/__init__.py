"""Checks of the whole repository: lint, import contracts, the architecture page, the README, screenshots."""
