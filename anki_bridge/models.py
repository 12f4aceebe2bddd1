"""Database models of this app."""
