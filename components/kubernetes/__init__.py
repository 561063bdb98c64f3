"""The GPU layer every cluster gets, built only from a `ClusterHandle` (never a cloud SDK)."""
