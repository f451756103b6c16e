/* Stand-in for Open MPI's generated ompi_config.h, so that the TreeMatch
   sources from ompi/3rd-party/treematch build outside Open MPI. */
#ifndef TM_STANDALONE_OMPI_CONFIG_H
#define TM_STANDALONE_OMPI_CONFIG_H
#define OMPI_HIDDEN
#endif
