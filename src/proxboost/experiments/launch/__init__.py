"""The command line: `run.py` (Hydra), its key and launcher checks, budgets, interrupts and
the clean-up of worker processes."""
