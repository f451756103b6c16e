/* Stand-in for the generated config.h: no Scotch (HAVE_LIBSCOTCH unset),
   so TreeMatch uses its own k-partitioning. */
