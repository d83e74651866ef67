"""SQL history and catalog storage: typed ORM models, sessions and repositories."""
