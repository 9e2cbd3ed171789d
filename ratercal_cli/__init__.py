"""ratercal: rater calibration methods and the Denny (1990) simulation study."""

__version__ = "0.1.0"
