"""mfu-pipeline: Nsight Systems traces in, trustworthy MFU reports out."""

__version__ = "0.1.0"
