# doc/: the design essays.
