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
// same path tidies up. Only names of exactly that pattern are touched. Because of this, one
// path must have one writer at a time (two concurrent writers of the same
// path would race for the rename anyway).
//
//	err := atomicfile.WriteFile("dir/model.safetensors", func(w io.Writer) error {
//		_, err := w.Write(data)
//		return err
//	})
//
//	f, err := atomicfile.Create("dir/metrics.csv") // for streaming writers
//	io.WriteString(f, "step,loss\n")
//	err = f.Commit() // or f.Abort()
//
// The package is internal to train: train/safetensors and train/report use
// it, and report re-exports it as report.WriteFileAtomic and
// report.CreateAtomic.
package atomicfile
