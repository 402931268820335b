"""The real-network runtime: UDP multicast sockets driving any sans-I/O core."""
