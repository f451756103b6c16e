! An unmodified Fortran program with graph topologies (use mpi, or use
! mpi_f08 with -DF08), for the graph drop-ins: vertex v talks heavily with
! v xor 1 (weight 100) and lightly with v+1 and v-1 on a ring (weight 1).
! MPI_Dist_graph_create_adjacent with reorder: every rank checks that its
! neighbours and weights are, in order, those of the vertex its new rank
! names. Then an unweighted ring (MPI_UNWEIGHTED) must stay unweighted.
! Prints "world W graph G" per rank and "checks ok".
program graph_program
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
#ifdef F08
  type(MPI_Comm) :: graph, ring
#else
  integer :: graph, ring
#endif
  integer :: ierr, world, nranks, me, n, m, i, in, out, failures, total
  integer :: list(3), weights(3), got(3), got_w(3), dest(3), dest_w(3), ring_list(2)
  logical :: weighted

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, world, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0
  call neighbours(world, list, weights, n)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, list, weights, n, list, weights, &
                                      MPI_INFO_NULL, .true., graph, ierr)
  if (ierr /= MPI_SUCCESS) failures = failures + 1
  call MPI_Comm_rank(graph, me, ierr)
  print '(a,i0,a,i0)', 'world ', world, ' graph ', me
  call neighbours(me, list, weights, n)
  call MPI_Dist_graph_neighbors_count(graph, in, out, weighted, ierr)
  if (in /= n .or. out /= n .or. .not. weighted) failures = failures + 1
  if (n > 0) then
    call MPI_Dist_graph_neighbors(graph, 3, got, got_w, 3, dest, dest_w, ierr)
    do i = 1, n
      if (got(i) /= list(i) .or. dest(i) /= list(i) .or. got_w(i) /= weights(i)) then
        failures = failures + 1
      end if
    end do
  end if

  m = 0
  if (nranks > 1) then
    m = 1
    ring_list(1) = mod(world + 1, nranks)
    if (nranks > 2) then
      m = 2
      ring_list(2) = mod(world + nranks - 1, nranks)
    end if
  end if
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, m, ring_list, MPI_UNWEIGHTED, m, &
                                      ring_list, MPI_UNWEIGHTED, MPI_INFO_NULL, .true., ring, ierr)
  if (ierr /= MPI_SUCCESS) failures = failures + 1
  call MPI_Dist_graph_neighbors_count(ring, in, out, weighted, ierr)
  if (in /= m .or. out /= m .or. weighted) failures = failures + 1

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (world == 0 .and. total == 0) print '(a)', 'checks ok'
  call MPI_Comm_free(graph, ierr)
  call MPI_Comm_free(ring, ierr)
  call MPI_Finalize(ierr)

contains

  ! Vertex v's neighbours in declaration order, without repeats or v.
  subroutine neighbours(v, list, weights, n)
    integer, intent(in) :: v
    integer, intent(out) :: list(3), weights(3), n
    integer :: candidates(3), candidate_weights(3), k, j
    logical :: seen
    candidates = [ieor(v, 1), mod(v + 1, nranks), mod(v + nranks - 1, nranks)]
    candidate_weights = [100, 1, 1]
    n = 0
    do k = 1, 3
      seen = candidates(k) == v .or. candidates(k) >= nranks
      do j = 1, n
        seen = seen .or. list(j) == candidates(k)
      end do
      if (.not. seen) then
        n = n + 1
        list(n) = candidates(k)
        weights(n) = candidate_weights(k)
      end if
    end do
  end subroutine neighbours
end program graph_program
