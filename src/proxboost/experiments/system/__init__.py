"""What the experiments need of the system: sealed atomic files, one-line I/O errors, and the
private API of joblib and loky that the clean-up of workers relies on."""
