"""Post 03 (uncertainty): tables and claims."""
