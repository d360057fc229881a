"""allocbias: audit language models for allocational harms in hiring."""

__version__ = "0.1.0"
