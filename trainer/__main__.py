"""Entry point: ``python -m trainer`` (also under ``torchrun``)."""

import sys

from trainer.cli import main

if __name__ == "__main__":
    sys.exit(main())
