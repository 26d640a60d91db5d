! `use mpi`: mpif.h's constants in a module. Like mpif.h, it declares no interfaces, so calls
! are not checked against the MPI signatures (the bindings are the same gfortran symbols).
module mpi
  implicit none
  include 'mpif.h'
end module mpi
