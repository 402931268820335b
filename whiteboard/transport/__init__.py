"""The common transport interface, the drivers that pump a sans-I/O core, and the `raw` core."""
