! An unmodified Fortran MPI program (use mpi): each rank r sends 10 (r + 1)
! integers to rank r + 1 three times (MPI_Sendrecv), starts a persistent
! send of 5 integers to r + 1 twice (MPI_Send_init, MPI_Start), then all
! take part in one MPI_Allreduce of an integer, an MPI_Alltoallv in place
! of 2 integers per rank, and an MPI_Ibcast of 4 integers from rank 0.
program ring_program
  use mpi
  implicit none
  integer :: r, p, ierr, i, request, x, y
  integer :: out(100), in(100), status(MPI_STATUS_SIZE)
  integer :: counts(64), displs(64), unused(64)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  out = 0
  do i = 1, 3
    call MPI_Sendrecv(out, 10 * (r + 1), MPI_INTEGER, mod(r + 1, p), 0, in, 100, MPI_INTEGER, &
                      mod(r + p - 1, p), 0, MPI_COMM_WORLD, status, ierr)
  end do
  call MPI_Send_init(out, 5, MPI_INTEGER, mod(r + 1, p), 1, MPI_COMM_WORLD, request, ierr)
  do i = 1, 2
    call MPI_Start(request, ierr)
    call MPI_Recv(in, 100, MPI_INTEGER, mod(r + p - 1, p), 1, MPI_COMM_WORLD, status, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Request_free(request, ierr)
  x = r
  call MPI_Allreduce(x, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, p
    counts(i) = 2
    displs(i) = 2 * (i - 1)
    unused(i) = -1
  end do
  call MPI_Alltoallv(MPI_IN_PLACE, unused, unused, MPI_DATATYPE_NULL, in, counts, displs, &
                     MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Ibcast(out, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call MPI_Finalize(ierr)
  if (ierr /= MPI_SUCCESS) stop 3
end program ring_program
