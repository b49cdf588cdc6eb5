"""What the stored rows become: SUMMARY.md and claims.csv (`summary`), the figures, the HTML
report, the sweep report and the benchmark report."""
