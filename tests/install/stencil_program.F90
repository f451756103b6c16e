! An ordinary Fortran stencil program that knows nothing of rankshape:
! MPI_Cart_create with reorder, then a halo exchange along each dimension
! checked against MPI_Cart_shift. outsider_test.sh builds it with use mpi
! and with use mpi_f08 (-DF08) and runs it with librankshape_cart.so
! preloaded.
!   stencil_program Q0 Q1
! Rank 0 prints "world W cart C" for every world rank and "checks ok".
program stencil_program
#ifdef F08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: cart
#else
  use mpi
  implicit none
  integer :: cart
#endif
  integer :: dims(2), ierror, rank, world_rank, world_size, k, down, up, from_down, from_up
  integer :: failed, any
  integer, allocatable :: carts(:)
  character(len=32) :: arg

  call MPI_Init(ierror)
  call MPI_Comm_rank(MPI_COMM_WORLD, world_rank, ierror)
  call MPI_Comm_size(MPI_COMM_WORLD, world_size, ierror)
  do k = 1, 2
    call get_command_argument(k, arg)
    read (arg, *) dims(k)
  end do
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, [.true., .true.], .true., cart, ierror)
  if (ierror /= MPI_SUCCESS) then
    write (0, '(a,i0)') 'MPI_Cart_create failed: ', ierror
    call MPI_Abort(MPI_COMM_WORLD, 1, ierror)
  end if
  call MPI_Comm_rank(cart, rank, ierror)
  failed = 0
  do k = 0, 1
    call MPI_Cart_shift(cart, k, 1, down, up, ierror)
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, up, 0, from_down, 1, MPI_INTEGER, down, 0, cart, &
                      MPI_STATUS_IGNORE, ierror)
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, down, 1, from_up, 1, MPI_INTEGER, up, 1, cart, &
                      MPI_STATUS_IGNORE, ierror)
    if (from_down /= down .or. from_up /= up) failed = 1
  end do
  allocate (carts(world_size))
  call MPI_Gather(rank, 1, MPI_INTEGER, carts, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierror)
  call MPI_Allreduce(failed, any, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierror)
  if (world_rank == 0) then
    do k = 1, world_size
      write (*, '(a,i0,a,i0)') 'world ', k - 1, ' cart ', carts(k)
    end do
    if (any == 0) then
      write (*, '(a)') 'checks ok'
    else
      write (*, '(a)') 'checks failed'
    end if
  end if
  call MPI_Comm_free(cart, ierror)
  call MPI_Finalize(ierror)
end program stencil_program
