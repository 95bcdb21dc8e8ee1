"""Reports: one result model (model.py), rendered in each format by its own module; formats.py
maps the command line's format names to them. Kept free of imports so that importing the model
never pulls in the renderers (some of which read the mutant catalogue, which uses the model)."""
