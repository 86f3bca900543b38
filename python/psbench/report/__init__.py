"""What people read: the text of one run and of a sweep, tables in every format,
plots, the offline HTML page and the comparison of result sets.
"""
