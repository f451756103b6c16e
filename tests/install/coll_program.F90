! An ordinary Fortran program's nine collectives, MPI_IN_PLACE included,
! each result checked: outsider_test.sh builds it with use mpi and with
! use mpi_f08 (-DF08) and runs it with librankshape_coll.so preloaded.
! Rank 0 prints "checks ok" and "dispatched N": the calls the drop-in ran
! hierarchically (probe.c; -1 when no drop-in is loaded).
program coll_program
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  interface
    integer(c_long) function dispatched() bind(C, name="rankshape_probe_dispatched")
      use, intrinsic :: iso_c_binding, only: c_long
    end function dispatched
  end interface
  integer :: rank, p, ierror, i, failed, any, x, y, root
  integer, allocatable :: a(:), b(:)
  integer(kind=8) :: calls

  call MPI_Init(ierror)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierror)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierror)
  allocate (a(p), b(p))
  failed = 0

  x = rank + 1
  call MPI_Allreduce(x, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierror)
  call expect('allreduce', y, p * (p + 1) / 2)
  y = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierror)
  call expect('allreduce in place', y, p * (p + 1) / 2)

  x = -1
  if (rank == 0) x = 42
  call MPI_Bcast(x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierror)
  call expect('bcast', x, 42)

  root = p - 1
  x = rank + 1
  y = x
  if (rank == root) then
    call MPI_Reduce(MPI_IN_PLACE, y, 1, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierror)
    call expect('reduce in place', y, p * (p + 1) / 2)
  else
    call MPI_Reduce(x, y, 1, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierror)
  end if

  x = rank * 10
  a = -1
  call MPI_Gather(x, 1, MPI_INTEGER, a, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierror)
  if (rank == 0) then
    do i = 1, p
      call expect('gather', a(i), (i - 1) * 10)
    end do
  end if

  do i = 1, p
    a(i) = 100 + i - 1
  end do
  x = -1
  call MPI_Scatter(a, 1, MPI_INTEGER, x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierror)
  call expect('scatter', x, 100 + rank)

  a = -1
  a(rank + 1) = rank * rank
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INTEGER, MPI_COMM_WORLD, ierror)
  do i = 1, p
    call expect('allgather in place', a(i), (i - 1) * (i - 1))
  end do

  do i = 1, p
    a(i) = rank + i
  end do
  call MPI_Reduce_scatter_block(a, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierror)
  call expect('reduce_scatter_block', y, p * (p - 1) / 2 + p * (rank + 1))

  do i = 1, p
    a(i) = rank * 100 + i - 1
  end do
  call MPI_Alltoall(a, 1, MPI_INTEGER, b, 1, MPI_INTEGER, MPI_COMM_WORLD, ierror)
  do i = 1, p
    call expect('alltoall', b(i), (i - 1) * 100 + rank)
  end do

  call MPI_Barrier(MPI_COMM_WORLD, ierror)
  calls = dispatched()
  call MPI_Allreduce(failed, any, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierror)
  if (rank == 0) then
    if (any == 0) then
      write (*, '(a)') 'checks ok'
    else
      write (*, '(a)') 'checks failed'
    end if
    write (*, '(a,i0)') 'dispatched ', calls
  end if
  call MPI_Finalize(ierror)

contains

  subroutine expect(what, got, want)
    character(len=*), intent(in) :: what
    integer, intent(in) :: got, want
    if (got /= want) then
      write (0, '(a,i0,3a,i0,a,i0)') 'rank ', rank, ': ', what, ': got ', got, ', expected ', want
      failed = 1
    end if
  end subroutine expect

end program coll_program
