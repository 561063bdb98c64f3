"""gpuinfra's tooling: the mock engine and the credential-free offline preview."""
