! use rankshape: shaped communicators for Fortran programs, over the C
! interface (lib/shape/rankshape.h). Communicators may be `integer` handles
! (use mpi, mpif.h) or type(MPI_Comm) (use mpi_f08); the module converts
! them with MPI_Comm_f2c/MPI_Comm_c2f on the C side.
!
!   use mpi_f08
!   use rankshape
!   type(rankshape_shape) :: shape
!   type(MPI_Comm) :: cart
!   integer :: dims(2) = 0, ierror, down, up
!   call rankshape_relabel_comm(MPI_COMM_WORLD, dims, shape, ierror, &
!                               pattern="stencil:periodic")
!   if (ierror /= RANKSHAPE_OK) then
!     call rankshape_last_error(message)   ! the same on every rank
!   end if
!   call rankshape_comm(shape, cart)       ! cartesian, owned by shape
!   call MPI_Cart_shift(cart, 0, 1, down, up)
!   call rankshape_free(shape)             ! before MPI_Finalize
!
! Any traffic graph instead of a grid: this rank's partners (ranks of comm,
! from 0) and what it sends each (optional, 1 each if absent):
!   call rankshape_relabel_graph_comm(MPI_COMM_WORLD, partners, shape, ierror, &
!                                     weights=bytes)
!   call rankshape_comm(shape, comm)       ! MPI_Dist_graph_neighbors works
!
! Every argument after ierror is optional and keyword-only in practice:
! pattern, objective, source, cost_file, algorithm (strings; rankshape.h
! lists the values), seed, time_limit, periods (logical, one per dimension).
! dims is intent(inout): zeros come back as the chosen extents.
module rankshape
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_long_long, c_loc, c_null_char, &
                                         c_null_ptr, c_ptr, c_associated
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  public :: rankshape_shape
  public :: RANKSHAPE_OK, RANKSHAPE_ERR_ARG, RANKSHAPE_ERR_MPI, RANKSHAPE_ERR_INTERNAL
  public :: rankshape_relabel_comm, rankshape_relabel_graph_comm
  public :: rankshape_comm, rankshape_fibre, rankshape_free
  public :: rankshape_ndims, rankshape_coords, rankshape_new_rank, rankshape_old_rank
  public :: rankshape_objective_before, rankshape_objective_after, rankshape_lower_bound
  public :: rankshape_last_error, rankshape_last_mpi_error_class, rankshape_version

  integer, parameter :: RANKSHAPE_OK = 0, RANKSHAPE_ERR_ARG = 1, RANKSHAPE_ERR_MPI = 2, &
                        RANKSHAPE_ERR_INTERNAL = 3

  ! Owns the communicators; rankshape_free releases them.
  type :: rankshape_shape
    type(c_ptr) :: handle = c_null_ptr
  end type rankshape_shape

  interface rankshape_relabel_comm
    module procedure relabel_comm_handle, relabel_comm_f08
  end interface rankshape_relabel_comm
  interface rankshape_relabel_graph_comm
    module procedure relabel_graph_handle, relabel_graph_f08
  end interface rankshape_relabel_graph_comm
  interface rankshape_comm
    module procedure comm_handle, comm_f08
  end interface rankshape_comm
  interface rankshape_fibre
    module procedure fibre_handle, fibre_f08
  end interface rankshape_fibre

  interface
    integer(c_int) function c_relabel_comm_f(comm, ndims, dims, pattern, objective, source, &
                                             cost_file, algorithm, seed, time_limit, periods, &
                                             nperiods, shape) bind(C, name="rankshape_relabel_comm_f")
      import :: c_int, c_ptr, c_long_long, c_double
      integer(c_int), value :: comm, ndims
      integer(c_int), intent(in) :: dims(*)
      type(c_ptr), value :: pattern, objective, source, cost_file, algorithm
      integer(c_long_long), value :: seed
      real(c_double), value :: time_limit
      type(c_ptr), value :: periods
      integer(c_int), value :: nperiods
      type(c_ptr), intent(out) :: shape
    end function c_relabel_comm_f
    integer(c_int) function c_relabel_graph_comm_f(comm, degree, partners, weights, nweights, &
                                                   objective, source, cost_file, algorithm, seed, &
                                                   time_limit, shape) &
      bind(C, name="rankshape_relabel_graph_comm_f")
      import :: c_int, c_ptr, c_long_long, c_double
      integer(c_int), value :: comm, degree
      integer(c_int), intent(in) :: partners(*)
      type(c_ptr), value :: weights
      integer(c_int), value :: nweights
      type(c_ptr), value :: objective, source, cost_file, algorithm
      integer(c_long_long), value :: seed
      real(c_double), value :: time_limit
      type(c_ptr), intent(out) :: shape
    end function c_relabel_graph_comm_f
    integer(c_int) function c_comm_f(shape) bind(C, name="rankshape_comm_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: shape
    end function c_comm_f
    integer(c_int) function c_fibre_f(shape, k) bind(C, name="rankshape_fibre_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: shape
      integer(c_int), value :: k
    end function c_fibre_f
    subroutine c_dims(shape, dims) bind(C, name="rankshape_dims")
      import :: c_int, c_ptr
      type(c_ptr), value :: shape
      integer(c_int), intent(out) :: dims(*)
    end subroutine c_dims
    subroutine c_free(shape) bind(C, name="rankshape_free")
      import :: c_ptr
      type(c_ptr), intent(inout) :: shape
    end subroutine c_free
    integer(c_int) function c_ndims(shape) bind(C, name="rankshape_ndims")
      import :: c_int, c_ptr
      type(c_ptr), value :: shape
    end function c_ndims
    subroutine c_coords(shape, coords) bind(C, name="rankshape_coords")
      import :: c_int, c_ptr
      type(c_ptr), value :: shape
      integer(c_int), intent(out) :: coords(*)
    end subroutine c_coords
    integer(c_int) function c_new_rank(shape, old_rank) bind(C, name="rankshape_new_rank")
      import :: c_int, c_ptr
      type(c_ptr), value :: shape
      integer(c_int), value :: old_rank
    end function c_new_rank
    integer(c_int) function c_old_rank(shape, new_rank) bind(C, name="rankshape_old_rank")
      import :: c_int, c_ptr
      type(c_ptr), value :: shape
      integer(c_int), value :: new_rank
    end function c_old_rank
    real(c_double) function c_objective_before(shape) bind(C, name="rankshape_objective_before")
      import :: c_double, c_ptr
      type(c_ptr), value :: shape
    end function c_objective_before
    real(c_double) function c_objective_after(shape) bind(C, name="rankshape_objective_after")
      import :: c_double, c_ptr
      type(c_ptr), value :: shape
    end function c_objective_after
    real(c_double) function c_lower_bound(shape) bind(C, name="rankshape_lower_bound")
      import :: c_double, c_ptr
      type(c_ptr), value :: shape
    end function c_lower_bound
    integer(c_int) function c_last_error_copy(buffer, size) bind(C, name="rankshape_last_error_copy")
      import :: c_char, c_int
      character(kind=c_char), intent(out) :: buffer(*)
      integer(c_int), value :: size
    end function c_last_error_copy
    integer(c_int) function c_last_mpi_error_class() bind(C, name="rankshape_last_mpi_error_class")
      import :: c_int
    end function c_last_mpi_error_class
    type(c_ptr) function c_version() bind(C, name="rankshape_version")
      import :: c_ptr
    end function c_version
  end interface

  ! A NUL-terminated copy of an optional string argument, kept alive for
  ! the C call.
  type :: c_string
    character(kind=c_char), allocatable :: text(:)
  end type c_string

contains

  subroutine relabel_comm_handle(comm, dims, shape, ierror, pattern, objective, source, &
                                 cost_file, algorithm, seed, time_limit, periods)
    integer, intent(in) :: comm
    integer, intent(inout) :: dims(:)
    type(rankshape_shape), intent(out) :: shape
    integer, intent(out) :: ierror
    character(len=*), intent(in), optional :: pattern, objective, source, cost_file, algorithm
    integer(kind=8), intent(in), optional :: seed
    double precision, intent(in), optional :: time_limit
    logical, intent(in), optional :: periods(:)
    type(c_string), target :: s(5)
    integer(c_int) :: c_dims_in(size(dims)), c_dims_out(size(dims))
    integer(c_int), allocatable, target :: c_periods(:)
    integer(c_long_long) :: c_seed
    real(c_double) :: c_time_limit
    type(c_ptr) :: periods_ptr
    integer(c_int) :: nperiods

    call search_options(seed, time_limit, c_seed, c_time_limit)
    periods_ptr = c_null_ptr
    nperiods = 0
    if (present(periods)) then
      ! The C side checks the count on every rank and says what is wrong.
      nperiods = size(periods)
      allocate (c_periods(max(1, nperiods)))
      c_periods(1:nperiods) = merge(1, 0, periods)
      periods_ptr = c_loc(c_periods)
    end if
    call to_c(s(1), pattern)
    call to_c(s(2), objective)
    call to_c(s(3), source)
    call to_c(s(4), cost_file)
    call to_c(s(5), algorithm)
    c_dims_in = dims
    ierror = c_relabel_comm_f(comm, size(dims), c_dims_in, ptr(s(1)), ptr(s(2)), ptr(s(3)), &
                              ptr(s(4)), ptr(s(5)), c_seed, c_time_limit, periods_ptr, &
                              nperiods, shape%handle)
    ! Zeros in dims come back as the extents chosen.
    if (ierror == RANKSHAPE_OK) then
      call c_dims(shape%handle, c_dims_out)
      dims = c_dims_out
    end if
  end subroutine relabel_comm_handle

  subroutine relabel_comm_f08(comm, dims, shape, ierror, pattern, objective, source, &
                              cost_file, algorithm, seed, time_limit, periods)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(inout) :: dims(:)
    type(rankshape_shape), intent(out) :: shape
    integer, intent(out) :: ierror
    character(len=*), intent(in), optional :: pattern, objective, source, cost_file, algorithm
    integer(kind=8), intent(in), optional :: seed
    double precision, intent(in), optional :: time_limit
    logical, intent(in), optional :: periods(:)
    call relabel_comm_handle(comm%MPI_VAL, dims, shape, ierror, pattern, objective, source, &
                             cost_file, algorithm, seed, time_limit, periods)
  end subroutine relabel_comm_f08

  ! Any traffic graph: this rank sends weights(i) (1 each if absent) to
  ! partners(i), ranks of comm counted from 0 as in MPI. Collective; every
  ! rank gets the same ierror. rankshape_comm then gives a communicator with
  ! a distributed graph topology: rank k is vertex k, its neighbours those
  ! the rank that was k declared.
  subroutine relabel_graph_handle(comm, partners, shape, ierror, weights, objective, source, &
                                  cost_file, algorithm, seed, time_limit)
    integer, intent(in) :: comm
    integer, intent(in) :: partners(:)
    type(rankshape_shape), intent(out) :: shape
    integer, intent(out) :: ierror
    double precision, intent(in), optional :: weights(:)
    character(len=*), intent(in), optional :: objective, source, cost_file, algorithm
    integer(kind=8), intent(in), optional :: seed
    double precision, intent(in), optional :: time_limit
    type(c_string), target :: s(4)
    integer(c_int) :: c_partners(max(1, size(partners)))
    real(c_double), allocatable, target :: c_weights(:)
    integer(c_long_long) :: c_seed
    real(c_double) :: c_time_limit
    type(c_ptr) :: weights_ptr
    integer(c_int) :: nweights

    call search_options(seed, time_limit, c_seed, c_time_limit)
    weights_ptr = c_null_ptr
    nweights = 0
    if (present(weights)) then
      ! The C side checks the count on every rank and says what is wrong.
      nweights = size(weights)
      allocate (c_weights(max(1, nweights)))
      c_weights(1:nweights) = weights
      weights_ptr = c_loc(c_weights)
    end if
    c_partners(1:size(partners)) = partners
    call to_c(s(1), objective)
    call to_c(s(2), source)
    call to_c(s(3), cost_file)
    call to_c(s(4), algorithm)
    ierror = c_relabel_graph_comm_f(comm, size(partners), c_partners, weights_ptr, nweights, &
                                    ptr(s(1)), ptr(s(2)), ptr(s(3)), ptr(s(4)), c_seed, &
                                    c_time_limit, shape%handle)
  end subroutine relabel_graph_handle

  subroutine relabel_graph_f08(comm, partners, shape, ierror, weights, objective, source, &
                               cost_file, algorithm, seed, time_limit)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: partners(:)
    type(rankshape_shape), intent(out) :: shape
    integer, intent(out) :: ierror
    double precision, intent(in), optional :: weights(:)
    character(len=*), intent(in), optional :: objective, source, cost_file, algorithm
    integer(kind=8), intent(in), optional :: seed
    double precision, intent(in), optional :: time_limit
    call relabel_graph_handle(comm%MPI_VAL, partners, shape, ierror, weights, objective, source, &
                              cost_file, algorithm, seed, time_limit)
  end subroutine relabel_graph_f08

  ! The shaped communicator: rank i is grid position i, with the grid's
  ! cartesian topology (a graph's: its distributed graph topology). Owned
  ! by shape (do not free it).
  subroutine comm_handle(shape, comm)
    type(rankshape_shape), intent(in) :: shape
    integer, intent(out) :: comm
    comm = c_comm_f(shape%handle)
  end subroutine comm_handle

  subroutine comm_f08(shape, comm)
    type(rankshape_shape), intent(in) :: shape
    type(MPI_Comm), intent(out) :: comm
    comm%MPI_VAL = c_comm_f(shape%handle)
  end subroutine comm_f08

  ! The fibre through this rank along dimension k (0-based, as in C);
  ! MPI_COMM_NULL if k is out of range. Owned by shape.
  subroutine fibre_handle(shape, k, comm)
    type(rankshape_shape), intent(in) :: shape
    integer, intent(in) :: k
    integer, intent(out) :: comm
    comm = c_fibre_f(shape%handle, k)
  end subroutine fibre_handle

  subroutine fibre_f08(shape, k, comm)
    type(rankshape_shape), intent(in) :: shape
    integer, intent(in) :: k
    type(MPI_Comm), intent(out) :: comm
    comm%MPI_VAL = c_fibre_f(shape%handle, k)
  end subroutine fibre_f08

  ! Frees the communicators (before MPI_Finalize).
  subroutine rankshape_free(shape)
    type(rankshape_shape), intent(inout) :: shape
    call c_free(shape%handle)
  end subroutine rankshape_free

  integer function rankshape_ndims(shape)
    type(rankshape_shape), intent(in) :: shape
    rankshape_ndims = c_ndims(shape%handle)
  end function rankshape_ndims

  ! This rank's grid coordinates (0-based, rankshape_ndims entries).
  subroutine rankshape_coords(shape, coords)
    type(rankshape_shape), intent(in) :: shape
    integer, intent(out) :: coords(:)
    integer(c_int), allocatable :: c_coords_buf(:)
    if (.not. c_associated(shape%handle)) return
    allocate (c_coords_buf(max(1, c_ndims(shape%handle))))
    call c_coords(shape%handle, c_coords_buf)
    coords(1:c_ndims(shape%handle)) = c_coords_buf(1:c_ndims(shape%handle))
  end subroutine rankshape_coords

  integer function rankshape_new_rank(shape, old_rank)
    type(rankshape_shape), intent(in) :: shape
    integer, intent(in) :: old_rank
    rankshape_new_rank = c_new_rank(shape%handle, old_rank)
  end function rankshape_new_rank

  integer function rankshape_old_rank(shape, new_rank)
    type(rankshape_shape), intent(in) :: shape
    integer, intent(in) :: new_rank
    rankshape_old_rank = c_old_rank(shape%handle, new_rank)
  end function rankshape_old_rank

  double precision function rankshape_objective_before(shape)
    type(rankshape_shape), intent(in) :: shape
    rankshape_objective_before = c_objective_before(shape%handle)
  end function rankshape_objective_before

  double precision function rankshape_objective_after(shape)
    type(rankshape_shape), intent(in) :: shape
    rankshape_objective_after = c_objective_after(shape%handle)
  end function rankshape_objective_after

  ! A lower bound on the objective (-1 when none is known).
  double precision function rankshape_lower_bound(shape)
    type(rankshape_shape), intent(in) :: shape
    rankshape_lower_bound = c_lower_bound(shape%handle)
  end function rankshape_lower_bound

  ! What the last failing call said (blank if none), cut to len(message).
  subroutine rankshape_last_error(message)
    character(len=*), intent(out) :: message
    character(kind=c_char) :: buffer(len(message) + 1)
    integer :: n, i
    n = c_last_error_copy(buffer, len(message) + 1)
    message = ' '
    do i = 1, min(n, len(message))
      message(i:i) = buffer(i)
    end do
  end subroutine rankshape_last_error

  integer function rankshape_last_mpi_error_class()
    rankshape_last_mpi_error_class = c_last_mpi_error_class()
  end function rankshape_last_mpi_error_class

  ! The version of the library in use, e.g. "0.1.0".
  function rankshape_version() result(version)
    character(len=:), allocatable :: version
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    call c_f_string(c_version(), chars, n)
    allocate (character(len=n) :: version)
    version = transfer(chars(1:n), version)
  end function rankshape_version

  subroutine c_f_string(p, chars, n)
    use, intrinsic :: iso_c_binding, only: c_f_pointer
    type(c_ptr), intent(in) :: p
    character(kind=c_char), pointer, intent(out) :: chars(:)
    integer, intent(out) :: n
    call c_f_pointer(p, chars, [64])
    n = 0
    do while (n < 64)
      if (chars(n + 1) == c_null_char) exit
      n = n + 1
    end do
  end subroutine c_f_string

  ! The C call's seed and time limit: those given, else 1 and 5 s.
  subroutine search_options(seed, time_limit, c_seed, c_time_limit)
    integer(kind=8), intent(in), optional :: seed
    double precision, intent(in), optional :: time_limit
    integer(c_long_long), intent(out) :: c_seed
    real(c_double), intent(out) :: c_time_limit
    c_seed = 1
    if (present(seed)) c_seed = seed
    c_time_limit = 5
    if (present(time_limit)) c_time_limit = time_limit
  end subroutine search_options

  subroutine to_c(s, text)
    type(c_string), intent(out) :: s
    character(len=*), intent(in), optional :: text
    integer :: i, n
    ! Absent or blank: the default (NULL on the C side).
    if (.not. present(text)) return
    n = len_trim(text)
    if (n == 0) return
    allocate (s%text(n + 1))
    do i = 1, n
      s%text(i) = text(i:i)
    end do
    s%text(n + 1) = c_null_char
  end subroutine to_c

  type(c_ptr) function ptr(s)
    type(c_string), intent(in), target :: s
    ptr = c_null_ptr
    if (allocated(s%text)) ptr = c_loc(s%text)
  end function ptr

end module rankshape
