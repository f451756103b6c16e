! A halo exchange on a communicator rankshape has relabelled, from Fortran
! with use mpi_f08 (halo_mpi.f90 is the same with use mpi):
!
!   mpif90 halo_f08.f90 $(pkg-config --cflags --libs rankshape-fortran) -o halo_f08
!   mpirun -np 4 ./halo_f08 1 4 [COST_FILE]
!
! Zeros in Q0 Q1 are chosen. Rank 0 prints the library's version, the
! dims, "world W cart C" for every world rank, and "checks ok".
program halo_f08
  use mpi_f08
  use rankshape
  implicit none
  type(rankshape_shape) :: shape
  type(MPI_Comm) :: cart
  integer :: dims(2), ierror, rank, world_rank, world_size, k, down, up, from_down, from_up
  integer :: failed, any
  integer, allocatable :: carts(:)
  character(len=256) :: arg, message

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, world_rank)
  call MPI_Comm_size(MPI_COMM_WORLD, world_size)
  if (command_argument_count() < 2) then
    if (world_rank == 0) write (0, '(a)') 'usage: halo_f08 Q0 Q1 [COST_FILE]'
    call MPI_Finalize()
    stop 2
  end if
  do k = 1, 2
    call get_command_argument(k, arg)
    read (arg, *) dims(k)
  end do
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    call rankshape_relabel_comm(MPI_COMM_WORLD, dims, shape, ierror, pattern='stencil:periodic', &
                                source='file', cost_file=trim(arg), periods=[.true., .true.])
  else
    call rankshape_relabel_comm(MPI_COMM_WORLD, dims, shape, ierror, pattern='stencil:periodic', &
                                periods=[.true., .true.])
  end if
  if (ierror /= RANKSHAPE_OK) then
    call rankshape_last_error(message)   ! the same code on every rank
    if (world_rank == 0) write (0, '(2a)') 'halo_f08: ', trim(message)
    call MPI_Finalize()
    stop 1
  end if

  call rankshape_comm(shape, cart)       ! cartesian, owned by shape
  call MPI_Comm_rank(cart, rank)
  failed = 0
  do k = 0, 1
    call MPI_Cart_shift(cart, k, 1, down, up)
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, up, 0, from_down, 1, MPI_INTEGER, down, 0, cart, &
                      MPI_STATUS_IGNORE)
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, down, 1, from_up, 1, MPI_INTEGER, up, 1, cart, &
                      MPI_STATUS_IGNORE)
    if (from_down /= down .or. from_up /= up) failed = 1
  end do
  allocate (carts(world_size))
  call MPI_Gather(rank, 1, MPI_INTEGER, carts, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Allreduce(failed, any, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  if (world_rank == 0) then
    write (*, '(2a)') 'rankshape ', rankshape_version()
    write (*, '(a,i0,1x,i0)') 'dims ', dims(1), dims(2)   ! zeros were chosen
    do k = 1, world_size
      write (*, '(a,i0,a,i0)') 'world ', k - 1, ' cart ', carts(k)
    end do
    if (any == 0) then
      write (*, '(a)') 'checks ok'
    else
      write (*, '(a)') 'checks failed'
    end if
  end if
  call rankshape_free(shape)             ! before MPI_Finalize
  call MPI_Finalize()
  if (any /= 0) stop 1
end program halo_f08
