"""Prices refreshed from each cloud's own price API (`gpuinfra prices`).

`file` (the dated price file the cost estimate and sizing read) imports no cloud SDK, so the
offline preview stays fast and runs without them; `command` and the per-cloud modules
(`aws`, `alicloud`, `tencentcloud`, `volcengine`) import their SDK only when a refresh runs
(`pip install 'gpuinfra[prices]'`).
"""
