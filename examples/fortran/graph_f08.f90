! A traffic graph relabelled by rankshape, from Fortran with use mpi_f08:
! pairs of ranks (2i, 2i+1) that talk heavily, and a light ring through
! all ranks.
!
!   mpif90 graph_f08.f90 $(pkg-config --cflags --libs rankshape-fortran) -o graph_f08
!   mpirun -np 4 ./graph_f08 [COST_FILE]
!
! The process with new rank k plays vertex k: MPI_Dist_graph_neighbors on
! the shaped communicator gives vertex k's partners, and a neighbour
! alltoall reaches them. Rank 0 prints the library's version, "vertex K
! world W" for every vertex, the objective before and after, and
! "checks ok".
program graph_f08
  use mpi_f08
  use rankshape
  implicit none
  type(rankshape_shape) :: shape
  type(MPI_Comm) :: graph
  integer :: ierror, world_rank, world_size, me, k, n, indegree, outdegree, failed, failures
  integer, allocatable :: partners(:), want(:), sources(:), destinations(:), in_weights(:), &
                          out_weights(:), sent(:), received(:), worlds(:)
  double precision, allocatable :: weights(:)
  logical :: weighted
  character(len=256) :: arg, message

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, world_rank)
  call MPI_Comm_size(MPI_COMM_WORLD, world_size)
  call vertex_partners(world_rank, world_size, partners, weights)
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    call rankshape_relabel_graph_comm(MPI_COMM_WORLD, partners, shape, ierror, weights=weights, &
                                      source='file', cost_file=trim(arg))
  else
    call rankshape_relabel_graph_comm(MPI_COMM_WORLD, partners, shape, ierror, weights=weights)
  end if
  if (ierror /= RANKSHAPE_OK) then
    call rankshape_last_error(message)   ! the same on every rank
    if (world_rank == 0) write (0, '(2a)') 'graph_f08: ', trim(message)
    call MPI_Finalize()
    stop 1
  end if

  ! From here on this process plays vertex me.
  call rankshape_comm(shape, graph)      ! owned by shape
  call MPI_Comm_rank(graph, me)
  failed = 0
  if (rankshape_old_rank(shape, me) /= world_rank) failed = 1
  call vertex_partners(me, world_size, want, weights)
  call sort(want)
  call MPI_Dist_graph_neighbors_count(graph, indegree, outdegree, weighted)
  if (outdegree /= size(want) .or. indegree /= size(want)) then
    failed = 1
  else
    n = size(want)
    allocate (sources(max(1, n)), destinations(max(1, n)), in_weights(max(1, n)), &
              out_weights(max(1, n)), sent(max(1, n)), received(max(1, n)))
    call MPI_Dist_graph_neighbors(graph, n, sources, in_weights, n, destinations, out_weights)
    call sort(destinations(1:n))
    if (any_differ(destinations(1:n), want)) failed = 1
    ! Each neighbour sends its new rank: what arrives names the sources.
    sent = me
    received = -1
    call MPI_Neighbor_alltoall(sent, 1, MPI_INTEGER, received, 1, MPI_INTEGER, graph)
    if (any_differ(received(1:n), sources(1:n))) failed = 1
  end if

  allocate (worlds(world_size))
  call MPI_Gather(world_rank, 1, MPI_INTEGER, worlds, 1, MPI_INTEGER, 0, graph)
  call MPI_Allreduce(failed, failures, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  if (me == 0) then
    write (*, '(2a)') 'rankshape ', rankshape_version()
    do k = 1, world_size
      write (*, '(a,i0,a,i0)') 'vertex ', k - 1, ' world ', worlds(k)
    end do
    write (*, '(a,es12.5,a,es12.5)') 'objective before ', rankshape_objective_before(shape), &
      ' after ', rankshape_objective_after(shape)
    if (failures == 0) then
      write (*, '(a)') 'checks ok'
    else
      write (*, '(a)') 'checks failed'
    end if
  end if
  call rankshape_free(shape)             ! before MPI_Finalize
  call MPI_Finalize()
  if (failures /= 0) stop 1

contains

  ! Vertex v's partners (each once, not v) and what v sends them: 1,000 to
  ! its pair, 1 along the ring.
  subroutine vertex_partners(v, p, partners, weights)
    integer, intent(in) :: v, p
    integer, allocatable, intent(out) :: partners(:)
    double precision, allocatable, intent(out) :: weights(:)
    integer :: candidates(3), i, j
    double precision :: amounts(3)
    candidates = [ieor(v, 1), modulo(v - 1, p), modulo(v + 1, p)]
    amounts = [1000d0, 1d0, 1d0]
    allocate (partners(0), weights(0))
    do i = 1, 3
      if (candidates(i) == v .or. candidates(i) >= p) cycle
      j = findloc(partners, candidates(i), 1)
      if (j > 0) then
        weights(j) = weights(j) + amounts(i)
      else
        partners = [partners, candidates(i)]
        weights = [weights, amounts(i)]
      end if
    end do
  end subroutine vertex_partners

  subroutine sort(a)
    integer, intent(inout) :: a(:)
    integer :: i, j, t
    do i = 2, size(a)
      t = a(i)
      j = i - 1
      do while (j >= 1)
        if (a(j) <= t) exit
        a(j + 1) = a(j)
        j = j - 1
      end do
      a(j + 1) = t
    end do
  end subroutine sort

  logical function any_differ(a, b)
    integer, intent(in) :: a(:), b(:)
    any_differ = size(a) /= size(b)
    if (.not. any_differ) any_differ = any(a /= b)
  end function any_differ
end program graph_f08
