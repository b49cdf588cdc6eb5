"""The plan: the protocol (splits, grids, selection), the methods and baselines a run compares,
and the manifest of every computation the report waits for (`versions`)."""
