"""The fits: one split of the paper protocol (`pipeline`), one synthetic curve (`curves`), with
their progress bars."""
