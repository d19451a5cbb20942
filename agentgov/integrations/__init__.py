"""Framework integrations as the server sees them: which exist, and how much each tenant uses them."""
