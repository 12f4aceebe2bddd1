"""The agent of the seed: four nodes over a shared store, run with checkpoints."""
