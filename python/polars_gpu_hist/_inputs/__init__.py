"""Host data as the package reads it: Polars Series (Arrow extension types as their storage),
pandas, awkward arrays of every layout, objects of the Arrow C data interface or with
``__array__``, numpy arrays and sequences, each made into a Polars Series (or, for the numpy
drop-in, a numpy array and its missing values) or refused with the fix."""
