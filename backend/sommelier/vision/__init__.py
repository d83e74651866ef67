"""Photos of wine labels and wine lists: text read offline (ocr.py), matched to the catalog
(labels.py)."""
