"""Interview Explorer: interview A2A agents and prove whether their answers match what they signed."""

__version__ = "0.2.0"
