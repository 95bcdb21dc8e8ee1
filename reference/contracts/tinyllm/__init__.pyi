# tinyllm: the course's numpy deep-learning library. Subpackages are imported explicitly.
