"""A toy fourth model kind (tests only): the teacher distilled to a single decision stump tree."""
