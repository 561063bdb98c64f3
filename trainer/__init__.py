"""Reference restartable PyTorch trainer of gpuinfra (``python -m trainer``)."""

__version__ = "0.1.0"
