"""gpuinfra: GPU training infrastructure. Loads settings, then builds the stack for `cloud`."""

from components.settings import load_settings
from stacks import build_stack

build_stack(load_settings())
