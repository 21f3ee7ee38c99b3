// Package atomicfile writes files so that a crash or an error never leaves a
// half-written file at the target path: the content goes to a hidden
// temporary file in the same directory (".name.tmp-<digits>"), which is
// flushed, fsynced and renamed over the target, and the directory is fsynced
// so the rename itself survives a power cut. On any error the temporary
// file is removed and the old file, if any, stays as it was.
//
// A process killed between creating the temporary file and renaming it
// leaves the temporary behind; Cleanup removes such orphans of one target,
// and Create (so WriteFile too) calls it first, so the next write of the
// same path tidies up. Only names of exactly that pattern are touched, and
// only those no live writer holds: each writer keeps a lock on its
// temporary (flock on Unix; on Windows the open file itself, which others
// cannot delete) until Commit or Abort, and the system drops the lock of a
// writer that dies. So several processes may write the same path at once
// (two workers of a sharded grid finishing together): each write is whole,
// and the last rename wins (on Windows, where a file must be closed before
// it is renamed, a Cleanup can still take a temporary in the instant
// between the two). Where no lock can be taken (a file system
// without them, Plan 9, WebAssembly), Cleanup leaves every temporary.
//
//	dir, _ := os.MkdirTemp("", "atomicfile")
//	defer os.RemoveAll(dir)
//	data := []byte("weights")
//	err := atomicfile.WriteFile(filepath.Join(dir, "model.safetensors"), func(w io.Writer) error {
//		_, err := w.Write(data)
//		return err
//	})
//	f, err := atomicfile.Create(filepath.Join(dir, "metrics.csv")) // for streaming writers
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	io.WriteString(f, "step,loss\n")
//	err = f.Commit() // or f.Abort(): readers see the old file or the whole new one
//	names, _ := os.ReadDir(dir)
//	fmt.Println(len(names), err)
//
// The package is internal to train: train/safetensors and train/report use
// it, and report re-exports it as report.WriteFileAtomic and
// report.CreateAtomic.
package atomicfile
