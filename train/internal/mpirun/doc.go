// Package mpirun runs a test binary's own tests as the ranks of an mpirun
// job: a parent test starts
//
//	mpirun --allow-run-as-root --oversubscribe -np N -x GELU_DIST_WORKER=1 -x … <the test binary> -test.run ^TestRank… -test.v
//
// in a process group of its own, ended whole after a timeout, and
// RequirePassed checks that every TestRank* test the job ran passed on
// every rank. The ranks themselves (joining MPI in a TestMain, skipping
// the TestRank* tests outside a job) are the caller's: train/dist's tests
// do it with dist's internals, train/internal/mpitest for the packages
// above dist. This package imports nothing of the module, so that both can
// use it: mpitest imports dist, and dist's tests cannot import mpitest.
//
// The caller passes the launcher lookup (dist.Launcher), which decides
// whether Open MPI is usable. Without it the parent tests skip with its
// reason, unless GELU_DIST_REQUIRE is set (CI sets it after installing
// openmpi-bin), which turns the skip into a failure. Use in a test
// (TestRun):
//
//	j := mpirun.Run(t, dist.Launcher, 2, "^TestRank", time.Minute, "GELU_MPIRUN_TEST=pass")
//	mpirun.RequirePassed(t, j, 2)
package mpirun
