"""The cellar: the bottles a person owns, when to open them, and how they were."""
