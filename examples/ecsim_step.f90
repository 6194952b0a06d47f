! One step of an implicit PIC (ECSIM) code through partile, from Fortran, on
! any backend: the particles sorted by cell and reordered with them, charge
! and current deposited, the ECSIM mass matrix assembled with ω from the
! magnetic field, the field solver's operator M·E applied both matrix-free
! and from the assembled matrix, and E and B gathered at the particles.
!
! Every array the library reads or writes lives in the context's memory
! (partile_malloc, partile_memcpy), so the same code runs on "cuda", "hip"
! or "reference". The per-particle product q·v and the push are the
! caller's own code: host loops here (a GPU code would run its own kernels
! on the same device pointers).
!
! The step then runs again on the reference backend and every result is
! compared bit for bit: the library's promise in FP64 (each header says
! which paths are bitwise; every call here uses one that is).
!
! Build against an installed partile (the module source is installed beside
! the C headers):
!   gfortran $(pkg-config --variable=includedir partile)/partile/partile.f90 \
!            ecsim_step.f90 $(pkg-config --libs partile)
! usage: ecsim_step [BACKEND [SEED]]   BACKEND: auto (default), cuda, hip, reference
! exit status: 0 every result equal to the reference's; 1 a difference or an
! error; 2 a malformed seed; 77 the named backend cannot run here (not compiled, or no
! device).
program ecsim_step
  use, intrinsic :: iso_c_binding
  use partile
  implicit none
  integer, parameter :: cells = 8, per_cell = 16, n = cells**3 * per_cell, points = cells**3
  real(c_double), parameter :: sigma = 0.25d0, beta_over_c = 0.5d0
  real(c_double), parameter :: two_pi = 6.283185307179586d0

  ! what one step leaves on the host, for the comparison
  type :: step_t
     character(len=:), allocatable :: backend, device
     integer(c_int64_t), allocatable :: offsets(:), perm(:)
     real(c_double), allocatable :: rho(:), current(:, :), storage(:), y_free(:, :), &
          y_assembled(:, :), e_at(:, :), b_at(:, :)
  end type step_t

  type(partile_grid_t), target :: grid
  real(c_double), allocatable, target :: x(:, :), v(:, :), q(:), e(:, :), b(:, :)
  type(step_t), target :: here, ref
  ! the step's context, its buffers, and its status (each call below runs
  ! only while every call before it succeeded)
  type(c_ptr) :: ctx, buffers(24)
  integer :: used
  integer(c_int) :: status
  character(len=64) :: backend, arg
  integer :: seed, differ, io
  integer(c_int) :: result
  real(c_double) :: relerr

  backend = "auto"
  if (command_argument_count() >= 1) call get_command_argument(1, backend)
  seed = 2026
  if (command_argument_count() >= 2) then
     call get_command_argument(2, arg)
     read (arg, *, iostat=io) seed
     if (io /= 0) then
        print '(a)', "ecsim_step: the seed must be an integer, not " // trim(arg)
        error stop 2
     end if
  end if

  ! a periodic unit cube of 8^3 cells, node-centred fields (one point per cell)
  grid%dim = 3
  grid%cells = cells
  grid%lower = 0
  grid%spacing = 1d0 / cells
  grid%periodic = 1
  call make_plasma(seed)

  result = run_step(trim(backend), here)
  if (result == PARTILE_ERROR_NOT_COMPILED .or. result == PARTILE_ERROR_NO_DEVICE) then
     print '(a)', "ecsim_step: backend " // trim(backend) // " cannot run here: " // &
          partile_message(result)
     stop 77
  end if
  call check(result, "step on " // trim(backend))
  call check(run_step("reference", ref), "step on the reference")

  print '(a, i0, a, i0, a)', "ecsim_step: ", n, " particles on ", cells, "^3 periodic cells, CIC, FP64"
  print '(a)', "  on " // here%backend // " (" // here%device // "), against the reference"
  print '(a)', "  result                      values   bits differ"
  differ = 0
  call compare_ints("perm (sorted order)", here%perm, ref%perm)
  call compare_ints("cell offsets", here%offsets, ref%offsets)
  call compare("charge density", here%rho, ref%rho)
  call compare("current q v", reshape(here%current, [3 * points]), reshape(ref%current, [3 * points]))
  call compare("mass matrix (canonical)", here%storage, ref%storage)
  call compare("M E matrix-free", reshape(here%y_free, [3 * points]), reshape(ref%y_free, [3 * points]))
  call compare("M E assembled", reshape(here%y_assembled, [3 * points]), &
       reshape(ref%y_assembled, [3 * points]))
  call compare("E at the particles", reshape(here%e_at, [3 * n]), reshape(ref%e_at, [3 * n]))
  call compare("B at the particles", reshape(here%b_at, [3 * n]), reshape(ref%b_at, [3 * n]))

  ! what the physics guarantees, to rounding: charge and current conserved
  ! by the deposit, and the two applies the same operator
  if (abs(sum(here%rho) - sum(q)) > 1d-12 * sum(abs(q))) error stop "charge not conserved"
  if (any(abs(sum(here%current, dim=2) - [sum(q * v(:, 1)), sum(q * v(:, 2)), sum(q * v(:, 3))]) &
       > 1d-12 * sum(abs(v)))) error stop "current not conserved"
  relerr = norm2(here%y_free - here%y_assembled) / norm2(here%y_assembled)
  print '(a, es9.2)', "  |M E matrix-free - assembled| / |M E assembled| = ", relerr
  if (relerr > 1d-13) error stop "matrix-free and assembled applies disagree"
  if (differ > 0) then
     print '(a, i0, a)', "ecsim_step: ", differ, " values differ from the reference's"
     error stop 1
  end if
  print '(a)', "ecsim_step: every result equal to the reference bit for bit"
  deallocate (x, v, q, e, b)

contains

  ! Random particles (16 per cell, charges ±1/16, small velocities), a
  ! random E and a B of a uniform guide field with a wave along z.
  subroutine make_plasma(seed)
    integer, intent(in) :: seed
    integer :: i, j, k, g, seeds
    integer, allocatable :: put(:)
    call random_seed(size=seeds)
    allocate (put(seeds))
    put = [(seed + 7919 * i, i = 1, seeds)]
    call random_seed(put=put)
    allocate (x(n, 3), v(n, 3), q(n), e(3, points), b(3, points))
    call random_number(x) ! in [0, 1): inside the box
    call random_number(v)
    v = 0.1d0 * (v - 0.5d0)
    q = [(merge(1d0, -1d0, mod(i, 2) == 0) / per_cell, i = 1, n)]
    call random_number(e)
    e = e - 0.5d0
    do k = 0, cells - 1
       do j = 0, cells - 1
          do i = 0, cells - 1
             g = 1 + i + cells * (j + cells * k) ! x fastest, as partile numbers points
             b(:, g) = [0.1d0 * sin(two_pi * k / cells), 0d0, 1d0]
          end do
       end do
    end do
  end subroutine make_plasma

  ! The step on one backend; its results copied back into r. Returns the
  ! first failing status (the context's creation's included).
  integer(c_int) function run_step(name, r)
    character(len=*), intent(in) :: name
    type(step_t), intent(out), target :: r
    type(c_ptr) :: d_x(3), d_v(3), d_q, d_qv, d_e, d_b, d_offsets, d_perm, d_rho, d_current, &
         d_storage, d_y_free, d_y_assembled, d_e_at, d_b_at
    type(partile_vectors_t) :: pos
    type(partile_array_t) :: arrays(7)
    type(partile_transfer_t) :: t
    type(partile_mass_params_t) :: mp
    type(partile_mass_layout_t) :: layout
    real(c_double), allocatable, target :: sorted_q(:), sorted_v(:, :), qv(:, :)
    integer(c_size_t), parameter :: nn = n, particle_bytes = 8 * n, field_bytes = 8 * points
    integer :: a, i
    integer(c_int) :: freed

    used = 0
    status = partile_context_create(name, 0, ctx)
    run_step = status
    if (status /= PARTILE_SUCCESS) return
    r%backend = partile_context_backend(ctx)
    r%device = partile_context_device(ctx)
    status = partile_mass_layout(grid, PARTILE_SHAPE_CIC, PARTILE_MASS_TENSOR, layout)

    ! the particles and fields into context memory (SoA positions), and
    ! room for the results
    do a = 1, 3
       call upload(d_x(a), c_loc(x(1, a)), particle_bytes)
       call upload(d_v(a), c_loc(v(1, a)), particle_bytes)
    end do
    call upload(d_q, c_loc(q), particle_bytes)
    call upload(d_e, c_loc(e), 3 * field_bytes)
    call upload(d_b, c_loc(b), 3 * field_bytes)
    call alloc(d_offsets, 8_c_size_t * (points + 1))
    call alloc(d_perm, particle_bytes)
    call alloc(d_qv, 3 * particle_bytes)
    call alloc(d_rho, field_bytes)
    call alloc(d_current, 3 * field_bytes)
    call alloc(d_storage, 8 * layout%entries)
    call alloc(d_y_free, 3 * field_bytes)
    call alloc(d_y_assembled, 3 * field_bytes)
    call alloc(d_e_at, 3 * particle_bytes)
    call alloc(d_b_at, 3 * particle_bytes)
    pos%type = PARTILE_DTYPE_FLOAT64
    pos%axis = d_x

    ! sort by cell, and reorder every particle array with the permutation
    if (status == PARTILE_SUCCESS) &
         status = partile_sort(ctx, grid, nn, pos, d_offsets, d_perm, c_null_ptr, c_null_ptr)
    do a = 1, 3
       arrays(a) = partile_array_t(d_x(a), PARTILE_DTYPE_FLOAT64)
       arrays(3 + a) = partile_array_t(d_v(a), PARTILE_DTYPE_FLOAT64)
    end do
    arrays(7) = partile_array_t(d_q, PARTILE_DTYPE_FLOAT64)
    if (status == PARTILE_SUCCESS) &
         status = partile_permute(ctx, nn, d_perm, 7_c_int, arrays, c_null_ptr, 0_c_size_t)

    ! the caller's own per-particle code: q·v as n × 3 row-major values
    allocate (sorted_q(n), sorted_v(n, 3), qv(3, n))
    call download(c_loc(sorted_q), d_q, particle_bytes)
    do a = 1, 3
       call download(c_loc(sorted_v(1, a)), d_v(a), particle_bytes)
    end do
    do i = 1, n
       qv(:, i) = sorted_q(i) * sorted_v(i, :)
    end do
    if (status == PARTILE_SUCCESS) &
         status = partile_memcpy(ctx, d_qv, c_loc(qv), 3 * particle_bytes, PARTILE_COPY_HOST_TO_DEVICE)

    ! charge and current: the sorted path (cell list given) adds into
    ! zeroed fields, bitwise in FP64
    t = partile_transfer_t(c_loc(grid), PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1_c_int, &
         c_null_ptr, PARTILE_ORDER_BY_POINT)
    if (status == PARTILE_SUCCESS) status = partile_memset(ctx, d_rho, 0_c_int, field_bytes)
    if (status == PARTILE_SUCCESS) &
         status = partile_deposit(ctx, t, nn, pos, d_q, d_offsets, d_rho, c_null_ptr)
    t%components = 3
    if (status == PARTILE_SUCCESS) status = partile_memset(ctx, d_current, 0_c_int, 3 * field_bytes)
    if (status == PARTILE_SUCCESS) &
         status = partile_deposit(ctx, t, nn, pos, d_qv, d_offsets, d_current, c_null_ptr)

    ! the ECSIM mass matrix, ω_p = (β/c) B(x_p) gathered in the kernel
    mp%grid = c_loc(grid)
    mp%shape = PARTILE_SHAPE_CIC
    mp%kind = PARTILE_MASS_TENSOR
    mp%sigma = sigma
    mp%bfield = d_b
    mp%beta_over_c = beta_over_c
    if (status == PARTILE_SUCCESS) status = partile_mass_assemble(ctx, mp, nn, pos, d_offsets, &
         d_q, c_null_ptr, d_storage, c_null_ptr)
    ! the field solver's product M·E, without and with the matrix
    if (status == PARTILE_SUCCESS) status = partile_mass_apply_matfree(ctx, mp, nn, pos, &
         d_offsets, d_q, c_null_ptr, d_e, d_y_free, c_null_ptr)
    if (status == PARTILE_SUCCESS) &
         status = partile_mass_apply_assembled(ctx, mp, d_storage, d_e, d_y_assembled)

    ! the fields at the particles, for the push
    if (status == PARTILE_SUCCESS) status = partile_gather(ctx, t, nn, pos, d_e, d_e_at, c_null_ptr)
    if (status == PARTILE_SUCCESS) status = partile_gather(ctx, t, nn, pos, d_b, d_b_at, c_null_ptr)

    allocate (r%offsets(points + 1), r%perm(n), r%rho(points), r%current(3, points), &
         r%storage(layout%entries), r%y_free(3, points), r%y_assembled(3, points), r%e_at(3, n), &
         r%b_at(3, n))
    call download(c_loc(r%offsets), d_offsets, 8_c_size_t * (points + 1))
    call download(c_loc(r%perm), d_perm, particle_bytes)
    call download(c_loc(r%rho), d_rho, field_bytes)
    call download(c_loc(r%current), d_current, 3 * field_bytes)
    call download(c_loc(r%storage), d_storage, 8 * layout%entries)
    call download(c_loc(r%y_free), d_y_free, 3 * field_bytes)
    call download(c_loc(r%y_assembled), d_y_assembled, 3 * field_bytes)
    call download(c_loc(r%e_at), d_e_at, 3 * particle_bytes)
    call download(c_loc(r%b_at), d_b_at, 3 * particle_bytes)

    if (status /= PARTILE_SUCCESS) print '(a)', name // ": " // partile_message(status)
    ! release everything; a failure here counts only where nothing failed before
    do i = used, 1, -1
       freed = partile_free(ctx, buffers(i))
       if (status == PARTILE_SUCCESS) status = freed
    end do
    freed = partile_context_destroy(ctx)
    if (status == PARTILE_SUCCESS) status = freed
    run_step = status
  end function run_step

  ! bytes of context memory, freed at the end of the step
  subroutine alloc(d, bytes)
    type(c_ptr), intent(out) :: d
    integer(c_size_t), intent(in) :: bytes
    d = c_null_ptr
    if (status /= PARTILE_SUCCESS) return
    status = partile_malloc(ctx, bytes, d)
    if (status /= PARTILE_SUCCESS) return
    used = used + 1
    buffers(used) = d
  end subroutine alloc
  subroutine upload(d, host, bytes)
    type(c_ptr), intent(out) :: d
    type(c_ptr), intent(in) :: host
    integer(c_size_t), intent(in) :: bytes
    call alloc(d, bytes)
    if (status == PARTILE_SUCCESS) &
         status = partile_memcpy(ctx, d, host, bytes, PARTILE_COPY_HOST_TO_DEVICE)
  end subroutine upload
  subroutine download(host, d, bytes)
    type(c_ptr), intent(in) :: host, d
    integer(c_size_t), intent(in) :: bytes
    if (status == PARTILE_SUCCESS) &
         status = partile_memcpy(ctx, host, d, bytes, PARTILE_COPY_DEVICE_TO_HOST)
  end subroutine download

  ! One line of the table: how many values differ in their bits.
  subroutine compare(what, got, want)
    character(len=*), intent(in) :: what
    real(c_double), intent(in) :: got(:), want(:)
    call report(what, size(want), &
         count(transfer(got, 1_c_int64_t, size(got)) /= transfer(want, 1_c_int64_t, size(want))))
  end subroutine compare
  subroutine compare_ints(what, got, want)
    character(len=*), intent(in) :: what
    integer(c_int64_t), intent(in) :: got(:), want(:)
    call report(what, size(want), count(got /= want))
  end subroutine compare_ints
  subroutine report(what, values, bad)
    character(len=*), intent(in) :: what
    integer, intent(in) :: values, bad
    character(len=26) :: label
    label = what
    print '(2x, a, i8, i14)', label, values, bad
    differ = differ + bad
  end subroutine report

  subroutine check(st, what)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: what
    if (st /= PARTILE_SUCCESS) then
       print '(a)', "ecsim_step: " // what // " failed"
       error stop 1
    end if
  end subroutine check
end program ecsim_step
