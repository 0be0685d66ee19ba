"""Pure scheduling framework: filter and score plugins, FitError text, FailedScheduling parsing."""
