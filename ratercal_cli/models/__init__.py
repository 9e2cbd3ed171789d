"""Response models: how a rater's score depends on a paper's quality."""
